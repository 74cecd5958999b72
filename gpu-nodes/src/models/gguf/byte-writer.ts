const INITIAL_CAPACITY_BYTES = 4096;

const utf8 = new TextEncoder();

/**
 * Little-endian growable buffer for GGUF header fields. `reserve` may swap the buffer, so callers must
 * call it before touching `this.buffer` or `this.view`.
 */
export class ByteWriter {
  private buffer = new Uint8Array(INITIAL_CAPACITY_BYTES);
  private view = new DataView(this.buffer.buffer);
  private length = 0;

  get byteLength(): number {
    return this.length;
  }

  u8(value: number): void {
    const at = this.reserve(1);
    this.view.setUint8(at, value);
  }
  i8(value: number): void {
    const at = this.reserve(1);
    this.view.setInt8(at, value);
  }
  u16(value: number): void {
    const at = this.reserve(2);
    this.view.setUint16(at, value, true);
  }
  i16(value: number): void {
    const at = this.reserve(2);
    this.view.setInt16(at, value, true);
  }
  u32(value: number): void {
    const at = this.reserve(4);
    this.view.setUint32(at, value, true);
  }
  i32(value: number): void {
    const at = this.reserve(4);
    this.view.setInt32(at, value, true);
  }
  f32(value: number): void {
    const at = this.reserve(4);
    this.view.setFloat32(at, value, true);
  }
  f64(value: number): void {
    const at = this.reserve(8);
    this.view.setFloat64(at, value, true);
  }
  u64(value: bigint | number): void {
    const at = this.reserve(8);
    this.view.setBigUint64(at, BigInt(value), true);
  }
  i64(value: bigint): void {
    const at = this.reserve(8);
    this.view.setBigInt64(at, value, true);
  }
  bool(value: boolean): void {
    this.u8(value ? 1 : 0);
  }

  /** GGUF string: u64 byte length, then UTF-8 bytes without terminator. */
  string(value: string): void {
    const bytes = utf8.encode(value);
    this.u64(bytes.length);
    this.bytes(bytes);
  }

  bytes(value: Uint8Array): void {
    const start = this.reserve(value.length);
    this.buffer.set(value, start);
  }

  zeros(count: number): void {
    const start = this.reserve(count);
    this.buffer.fill(0, start, start + count);
  }

  toBytes(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }

  private reserve(count: number): number {
    const start = this.length;
    const needed = start + count;
    if (needed > this.buffer.length) {
      const grown = new Uint8Array(Math.max(needed, this.buffer.length * 2));
      grown.set(this.buffer.subarray(0, start));
      this.buffer = grown;
      this.view = new DataView(grown.buffer);
    }
    this.length = needed;
    return start;
  }
}
