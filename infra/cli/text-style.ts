export interface TextStyle {
  dim(text: string): string;
  red(text: string): string;
}

const wrap =
  (open: string) =>
  (text: string): string =>
    `\u001b[${open}m${text}\u001b[0m`;

/** Plain text when off, so pipes, logs and tests never see escape codes. */
export function createTextStyle(enabled: boolean): TextStyle {
  if (!enabled) return { dim: (text) => text, red: (text) => text };
  return { dim: wrap("2"), red: wrap("31") };
}
