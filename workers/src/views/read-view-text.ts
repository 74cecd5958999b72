import type { ConversationViews, ViewState } from "./conversation-views.ts";

/** The exact prompt text an adapter's view holds now. */
export function readViewText(views: ConversationViews, adapter: string): string {
  return joinView(findView(views, adapter));
}

export function findView(views: ConversationViews, adapter: string): ViewState {
  const view = views.views.find((v) => v.adapter === adapter);
  if (!view) throw new RangeError(`no view for adapter "${adapter}"`);
  return view;
}

export function joinView(view: ViewState): string {
  return view.header + view.compacted.join("") + view.turns.map((turn) => turn.full).join("");
}
