import type { ByteWriter } from "./byte-writer.ts";
import { GGUF_VALUE_TYPE } from "./gguf-types.ts";
import type { GgufScalarKind, GgufScalarJsTypes, GgufValue } from "./gguf-types.ts";

type ScalarEncoders = { [K in GgufScalarKind]: (out: ByteWriter, value: GgufScalarJsTypes[K]) => void };

const SCALAR_ENCODERS: ScalarEncoders = {
  u8: (out, v) => out.u8(v),
  i8: (out, v) => out.i8(v),
  u16: (out, v) => out.u16(v),
  i16: (out, v) => out.i16(v),
  u32: (out, v) => out.u32(v),
  i32: (out, v) => out.i32(v),
  f32: (out, v) => out.f32(v),
  bool: (out, v) => out.bool(v),
  string: (out, v) => out.string(v),
  u64: (out, v) => out.u64(v),
  i64: (out, v) => out.i64(v),
  f64: (out, v) => out.f64(v),
};

/** Writes the value's type id, then its payload (arrays: item type, u64 count, items). */
export function encodeGgufValue(out: ByteWriter, value: GgufValue): void {
  out.u32(GGUF_VALUE_TYPE[value.type]);
  if (value.type !== "array") {
    encodeScalar(out, value.type, value.value);
    return;
  }
  out.u32(GGUF_VALUE_TYPE[value.itemType]);
  out.u64(value.values.length);
  // TypeScript cannot correlate itemType with values across the union; GgufArrayValue guarantees it.
  const encode = SCALAR_ENCODERS[value.itemType] as (out: ByteWriter, v: unknown) => void;
  for (const item of value.values) encode(out, item);
}

function encodeScalar<K extends GgufScalarKind>(out: ByteWriter, kind: K, value: GgufScalarJsTypes[K]): void {
  const encode: ScalarEncoders[K] = SCALAR_ENCODERS[kind];
  encode(out, value);
}
