/** The content cannot fit an adapter's budget however it is compacted: a caller error (HTTP 400). */
export class ViewBudgetError extends RangeError {
  override readonly name = "ViewBudgetError";
}
