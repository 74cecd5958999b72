export interface ListObject<T> {
  object: "list";
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** Cursor ids default to the page's own ends; an empty page has none. */
export function formatItemList<T extends { id: string }>(
  data: readonly T[],
  page: { hasMore: boolean; firstId?: string | null; lastId?: string | null },
): ListObject<T> {
  return {
    object: "list",
    data: [...data],
    first_id: page.firstId !== undefined ? page.firstId : (data[0]?.id ?? null),
    last_id: page.lastId !== undefined ? page.lastId : (data.at(-1)?.id ?? null),
    has_more: page.hasMore,
  };
}
