export * from "./conversation-views.ts";
export * from "./create-conversation-views.ts";
export * from "./apply-event-to-views.ts";
export * from "./build-conversation-views.ts";
export * from "./read-view-text.ts";
export * from "./render-prompts.ts";
export * from "./render-chat-messages-prompt.ts";
export * from "./view-budget-error.ts";
