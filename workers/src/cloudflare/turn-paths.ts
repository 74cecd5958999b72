/** Paths of the conversation object's `fetch` entry points (turns go over fetch; see conversation-handle.ts). */
export const TURN_PATH = "/turn";
export const STATELESS_TURN_PATH = "/stateless-turn";
