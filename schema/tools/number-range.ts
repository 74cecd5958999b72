/**
 * Numeric bounds as one range: the schema checker refuses an empty one, the grammar builder holds small
 * integer ranges exactly, and the output validator checks the rest. Structural input, so the three share it
 * without depending on each other.
 */
export interface NumberBounds {
  minimum?: number | undefined;
  maximum?: number | undefined;
  exclusiveMinimum?: number | undefined;
  exclusiveMaximum?: number | undefined;
}

/** The tightest lower and upper bound a number schema sets (±Infinity where none). */
export interface NumberRange {
  low: number;
  lowOpen: boolean;
  high: number;
  highOpen: boolean;
}

export function numberRange(schema: NumberBounds): NumberRange {
  let low = -Infinity;
  let lowOpen = false;
  let high = Infinity;
  let highOpen = false;
  if (schema.minimum !== undefined) low = schema.minimum;
  if (schema.exclusiveMinimum !== undefined && schema.exclusiveMinimum >= low) {
    low = schema.exclusiveMinimum;
    lowOpen = true;
  }
  if (schema.maximum !== undefined) high = schema.maximum;
  if (schema.exclusiveMaximum !== undefined && schema.exclusiveMaximum <= high) {
    high = schema.exclusiveMaximum;
    highOpen = true;
  }
  return { low, lowOpen, high, highOpen };
}

/** The smallest and largest integer in a range (infinite ends stay infinite), or null when there is none. */
export function integerRange(range: NumberRange): { min: number; max: number } | null {
  const min = Number.isFinite(range.low)
    ? Number.isInteger(range.low) && range.lowOpen
      ? range.low + 1
      : Math.ceil(range.low)
    : -Infinity;
  const max = Number.isFinite(range.high)
    ? Number.isInteger(range.high) && range.highOpen
      ? range.high - 1
      : Math.floor(range.high)
    : Infinity;
  return min > max ? null : { min, max };
}
