export interface RecentConversations {
  /** Marks a conversation as just served, evicting the least recently served past capacity. */
  touch(conversationId: string): void;
  /** Most recently served first. */
  list(): string[];
}

/**
 * The remote server manages the real KV (vLLM prefix cache, llama-server slots) and does not tell which
 * conversations it still holds, so the conversations this node served last are the best warm hint we have.
 */
export function createRecentConversations(capacity: number): RecentConversations {
  // A Map iterates in insertion order; re-inserting on touch keeps the oldest first.
  const entries = new Map<string, true>();
  return {
    touch(conversationId) {
      entries.delete(conversationId);
      entries.set(conversationId, true);
      for (const oldest of entries.keys()) {
        if (entries.size <= capacity) break;
        entries.delete(oldest);
      }
    },
    list() {
      return [...entries.keys()].reverse();
    },
  };
}
