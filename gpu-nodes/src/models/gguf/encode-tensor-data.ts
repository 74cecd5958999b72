import { encodeFloat16 } from "./float16.ts";

const IS_LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** GGUF payloads are little-endian; on such hosts the array's own bytes are reused without copying. */
export function encodeF32Tensor(values: Float32Array): Uint8Array {
  if (IS_LITTLE_ENDIAN_HOST) return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  values.forEach((value, i) => view.setFloat32(i * 4, value, true));
  return out;
}

export function encodeF16Tensor(values: Float32Array): Uint8Array {
  const out = new Uint8Array(values.length * 2);
  const view = new DataView(out.buffer);
  values.forEach((value, i) => view.setUint16(i * 2, encodeFloat16(value), true));
  return out;
}
