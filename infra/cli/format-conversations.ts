import type { Conversation } from "./conversation-schema.ts";

/** UTC and to the second: the same on every machine, and sortable. */
function formatCreatedAt(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function formatMetadata(metadata: Conversation["metadata"]): string {
  return Object.entries(metadata ?? {})
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
    .join(" ");
}

/** One line per conversation: `conv_… 2026-04-26T10:00:00Z project="demo"`. */
export function formatConversations(conversations: readonly Conversation[]): string {
  return conversations
    .map((conversation) =>
      [conversation.id, formatCreatedAt(conversation.created_at), formatMetadata(conversation.metadata)]
        .filter((column) => column !== "")
        .join("  "),
    )
    .map((line) => `${line}\n`)
    .join("");
}
