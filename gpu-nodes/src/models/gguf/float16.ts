const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

/** IEEE 754 binary16 bits of `value`, rounded to nearest-even like ggml_fp32_to_fp16. */
export function encodeFloat16(value: number): number {
  f32Scratch[0] = value;
  const bits = u32Scratch[0] ?? 0;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  const mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa === 0 ? 0 : 0x200);
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    if (halfExponent < -10) return sign;
    return sign | roundShift(mantissa | 0x800000, 14 - halfExponent);
  }
  // A rounding carry may ripple into the exponent; that is the correct result (up to infinity).
  return sign | ((halfExponent << 10) + roundShift(mantissa, 13));
}

export function decodeFloat16(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa === 0 ? sign * Infinity : NaN;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

function roundShift(value: number, shift: number): number {
  const kept = value >>> shift;
  const remainder = value & ((1 << shift) - 1);
  const halfway = 1 << (shift - 1);
  const roundUp = remainder > halfway || (remainder === halfway && (kept & 1) === 1);
  return roundUp ? kept + 1 : kept;
}
