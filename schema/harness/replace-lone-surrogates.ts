const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Makes text well-formed UTF-16 (lone surrogates become U+FFFD, as TextEncoder would encode them). Without
 * this, a lone high surrogate at the end of a view could pair with text appended later, and a string prefix
 * would stop being a byte prefix.
 */
export function replaceLoneSurrogates(text: string): string {
  return text.replace(LONE_SURROGATE, "\uFFFD");
}
