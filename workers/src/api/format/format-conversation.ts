export interface ConversationObject {
  id: string;
  object: "conversation";
  created_at: number;
  metadata: Record<string, string>;
}

/** `createdAt` in unix seconds, as every OpenAI object carries it. */
export function formatConversation(conversation: {
  id: string;
  createdAt: number;
  metadata?: Record<string, string> | null;
}): ConversationObject {
  return {
    id: conversation.id,
    object: "conversation",
    created_at: conversation.createdAt,
    metadata: conversation.metadata ?? {},
  };
}
