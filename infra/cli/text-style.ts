import { styleText } from "node:util";

export interface TextStyle {
  dim(text: string): string;
  red(text: string): string;
}

/**
 * Plain text when off, so pipes, logs and tests never see escape codes. The caller has already decided (TTY,
 * NO_COLOR), so styleText must not second-guess it against process.stdout (`validateStream`, Node ≥ 22.13).
 */
export function createTextStyle(enabled: boolean): TextStyle {
  if (!enabled) return { dim: (text) => text, red: (text) => text };
  return {
    dim: (text) => styleText("dim", text, { validateStream: false }),
    red: (text) => styleText("red", text, { validateStream: false }),
  };
}
