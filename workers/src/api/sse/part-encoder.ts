/** Turns a source of parts into SSE frames for one wire format; stateful, one per stream. */
export interface PartEncoder<P> {
  /** `done`: the part was terminal; the stream closes after these frames. */
  encodePart(part: P): { frames: string[]; done: boolean };
  /** The source ended without a terminal part. */
  encodeEnd(): string[];
  /** The source threw. */
  encodeFailure(error: unknown): string[];
}
