const COUNT_UNITS: readonly [number, string][] = [
  [1e12, "T"],
  [1e9, "B"],
  [1e6, "M"],
  [1e3, "K"],
];
const BYTE_UNITS: readonly [number, string][] = [
  [2 ** 40, " TiB"],
  [2 ** 30, " GiB"],
  [2 ** 20, " MiB"],
  [2 ** 10, " KiB"],
];

/**
 * Four significant digits with trailing zeros dropped (774.8B, 2.976T, 744B): enough to tell layouts
 * apart, short enough to read. The unit is chosen after rounding, so 999.96B prints as 1T.
 */
function formatScaled(value: number, units: readonly [number, string][], bare: string): string {
  const magnitude = Math.abs(value);
  for (const [scale, unit] of units) {
    const rounded = Number((magnitude / scale).toPrecision(4));
    if (rounded >= 1) return `${value < 0 ? "-" : ""}${rounded}${unit}`;
  }
  return `${Number(value.toPrecision(4))}${bare}`;
}

/** Parameters in decimal units: K, M, B (1e9), T (1e12). */
export function formatParameterCount(parameters: number): string {
  return formatScaled(parameters, COUNT_UNITS, "");
}

/** Bytes in binary units, as GPU memory is sized. */
export function formatByteSize(bytes: number): string {
  return formatScaled(bytes, BYTE_UNITS, " B");
}

/** A fraction as a percentage with one decimal: 0.73965 → "74.0 %". */
export function formatPercent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)} %`;
}
