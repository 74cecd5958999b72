/** `150/200 cached (75%)`: the count says how big the prompt was, the share says how well the KV was reused. */
export function formatCachedShare(cached: number, total: number): string {
  const share = total > 0 ? `${Math.round((cached / total) * 100)}%` : "n/a";
  return `${cached}/${total} cached (${share})`;
}
