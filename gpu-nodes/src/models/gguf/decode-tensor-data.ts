import { decodeFloat16 } from "./float16.ts";
import { GGML_TYPE } from "./ggml-type.ts";
import type { GgmlTypeId } from "./ggml-type.ts";

/** Float values of an F32 or F16 payload; quantized types are not decoded here. */
export function decodeTensorData(bytes: Uint8Array, type: GgmlTypeId): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (type === GGML_TYPE.F32) {
    return Float32Array.from({ length: bytes.length / 4 }, (_, i) => view.getFloat32(i * 4, true));
  }
  if (type === GGML_TYPE.F16) {
    return Float32Array.from({ length: bytes.length / 2 }, (_, i) =>
      decodeFloat16(view.getUint16(i * 2, true)),
    );
  }
  throw new Error(`decoding ggml type ${type} is not supported`);
}
