/** The window handed to the parser ended before the header did; retry with at least `neededBytes`. */
export class GgufNeedMoreBytesError extends Error {
  constructor(readonly neededBytes: number) {
    super(`GGUF header continues past the ${neededBytes}-byte window`);
    this.name = "GgufNeedMoreBytesError";
  }
}

const utf8 = new TextDecoder("utf-8");

/** Little-endian cursor over a prefix of a file of `fileSize` bytes. */
export class ByteReader {
  private readonly view: DataView;
  private position = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly fileSize: number,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get offset(): number {
    return this.position;
  }

  /** Bytes left in the whole file, to reject absurd counts before allocating for them. */
  get remainingInFile(): number {
    return this.fileSize - this.position;
  }

  u8(): number {
    return this.view.getUint8(this.take(1));
  }
  i8(): number {
    return this.view.getInt8(this.take(1));
  }
  u16(): number {
    return this.view.getUint16(this.take(2), true);
  }
  i16(): number {
    return this.view.getInt16(this.take(2), true);
  }
  u32(): number {
    return this.view.getUint32(this.take(4), true);
  }
  i32(): number {
    return this.view.getInt32(this.take(4), true);
  }
  f32(): number {
    return this.view.getFloat32(this.take(4), true);
  }
  f64(): number {
    return this.view.getFloat64(this.take(8), true);
  }
  u64(): bigint {
    return this.view.getBigUint64(this.take(8), true);
  }
  i64(): bigint {
    return this.view.getBigInt64(this.take(8), true);
  }
  bool(): boolean {
    const byte = this.u8();
    if (byte > 1) throw new Error(`invalid GGUF bool byte ${byte} at offset ${this.position - 1}`);
    return byte === 1;
  }

  /** A u64 used as a count or offset; must fit a JS number exactly. */
  size(): number {
    const value = this.u64();
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`GGUF size ${value} is too large`);
    return Number(value);
  }

  string(): string {
    const length = this.size();
    const start = this.take(length);
    return utf8.decode(this.bytes.subarray(start, start + length));
  }

  raw(length: number): Uint8Array {
    const start = this.take(length);
    return this.bytes.subarray(start, start + length);
  }

  private take(count: number): number {
    const start = this.position;
    const end = start + count;
    if (end > this.bytes.length) {
      if (end > this.fileSize || this.bytes.length >= this.fileSize) {
        throw new Error(`GGUF file is truncated: needs ${end} bytes, has ${this.fileSize}`);
      }
      throw new GgufNeedMoreBytesError(end);
    }
    this.position = end;
    return start;
  }
}
