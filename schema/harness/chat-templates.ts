import { templateFamilySchema, type TemplateFamily } from "../wire/v2/index.ts";
import type { HarnessTemplates } from "./harness-settings.ts";

/**
 * The chat formats views are rendered in, as data. A family is a full `templates` set plus the stop strings
 * its answers end with; the node picks the family from the GGUF it serves and advertises it in its heartbeat.
 *
 * Views stay strings (the prefix property and the stored views stay simple), so the special tokens a template
 * inserts are marked in the text: each one sits between SPECIAL_OPEN and SPECIAL_CLOSE (private-use code points
 * the edge strips from every client text, see `cleanConversationText`). The node tokenizes what is between a
 * pair as special tokens and everything else as plain text, so a user typing `<|im_start|>system` gets the
 * plain-text tokens of those characters and never opens a turn. Special tokens come only from templates.
 */
export const SPECIAL_OPEN = "\uE000";
export const SPECIAL_CLOSE = "\uE001";
/**
 * An empty pair: no token, but the text on either side is tokenized apart. Every cue of a chat format ends
 * with one, so a hop's prompt tokenizes to a token-prefix of the next view whatever the model writes after the
 * cue (joined, `[/INST]` and a reply starting with "," could merge into one token).
 */
export const TOKEN_BOUNDARY = SPECIAL_OPEN + SPECIAL_CLOSE;
/** Both sentinels; client text never keeps them. */
export const SPECIAL_SENTINELS = /[\uE000\uE001]/g;

export const chatTemplateFamilySchema = templateFamilySchema;
export type ChatTemplateFamily = TemplateFamily;

export interface ChatTemplateFamilySpec {
  templates: HarnessTemplates;
  /** Answer stop strings, as the model's text shows them (end-of-turn tokens also stop generation). */
  answerStop: readonly string[];
}

function special(token: string): string {
  return SPECIAL_OPEN + token + SPECIAL_CLOSE;
}

const IM_START = special("<|im_start|>");
const IM_END = special("<|im_end|>");
const HEADER = (role: string) =>
  special("<|start_header_id|>") + role + special("<|end_header_id|>") + "\n\n";
const EOT = special("<|eot_id|>");
const CUE = (role: string) => HEADER(role) + TOKEN_BOUNDARY;

/**
 * The route line and another specialist's summary are assistant turns (the model only ever sees
 * user/assistant alternation after the system turn); the summary instruction is a system turn. Cues open the
 * turn the model then writes, so each hop's prompt ends exactly where the next line of the view starts.
 */
export const CHAT_TEMPLATE_FAMILIES: Record<ChatTemplateFamily, ChatTemplateFamilySpec> = {
  plain: {
    templates: {
      systemPrefix: "system: ",
      userPrefix: "user: ",
      assistantCue: "assistant:",
      routeCue: "route:",
      summaryLine: "[{label}] {text}",
      summaryCue: "summary:",
      lineEnd: "\n",
      clippedMark: "…",
    },
    // The model would otherwise go on to write the user's next line itself.
    answerStop: ["\nuser:"],
  },
  chatml: {
    templates: {
      systemPrefix: `${IM_START}system\n`,
      userPrefix: `${IM_START}user\n`,
      assistantCue: `${IM_START}assistant\n${TOKEN_BOUNDARY}`,
      routeCue: `${IM_START}assistant\n${TOKEN_BOUNDARY}`,
      summaryLine: `${IM_START}assistant\n[{label}] {text}`,
      summaryCue: `${IM_START}assistant\n${TOKEN_BOUNDARY}`,
      lineEnd: `${IM_END}\n`,
      clippedMark: "…",
    },
    answerStop: ["<|im_end|>", "<|im_start|>"],
  },
  llama3: {
    templates: {
      systemPrefix: HEADER("system"),
      userPrefix: HEADER("user"),
      assistantCue: CUE("assistant"),
      routeCue: CUE("assistant"),
      summaryLine: `${HEADER("assistant")}[{label}] {text}`,
      summaryCue: CUE("assistant"),
      lineEnd: EOT,
      clippedMark: "…",
    },
    answerStop: ["<|eot_id|>", "<|start_header_id|>"],
  },
  // `[INST]` is plain text in Llama-2's vocabulary; only <s> and </s> are special. The node prepends the
  // first <s> (BOS); each later user turn opens with its own, as in Llama-2's multi-turn format.
  llama2: {
    templates: {
      systemPrefix: "[INST] <<SYS>>\n",
      systemEnd: "\n<</SYS>> [/INST]",
      userPrefix: `${special("<s>")}[INST] `,
      userEnd: " [/INST]",
      // The reply follows `[/INST]` directly: its first token carries its own leading space ("▁Paris").
      assistantCue: TOKEN_BOUNDARY,
      routeCue: TOKEN_BOUNDARY,
      summaryLine: " [{label}] {text}",
      summaryCue: TOKEN_BOUNDARY,
      lineEnd: ` ${special("</s>")}`,
      clippedMark: "…",
    },
    answerStop: ["</s>", "[INST]"],
  },
};

/** The GGUF metadata a family is read from. */
export interface ModelFormatInfo {
  architecture: string | undefined;
  chatTemplate: string | undefined;
  /** `general.name`: tells a template-less Llama-2 or Llama-3 conversion apart. */
  name?: string | undefined;
}

export interface DetectedFamily {
  family: ChatTemplateFamily;
  /** Set when the model's format is not one we render: the views fall back to the plain format. */
  warning?: string;
}

/**
 * The family of a served model: from its `tokenizer.chat_template` (substring checks on the markers each
 * format is made of), else from `general.architecture` for GGUFs that carry no template. Anything else falls
 * back to the plain format, with a warning for the node's log and heartbeat.
 */
export function detectChatTemplateFamily(info: ModelFormatInfo): DetectedFamily {
  const template = info.chatTemplate ?? "";
  if (template.includes("<|im_start|>")) return { family: "chatml" };
  if (template.includes("<|start_header_id|>")) return { family: "llama3" };
  if (template.includes("[INST]")) return { family: "llama2" };
  if (template === "" && info.architecture === "llama") {
    // GGUFs converted without a template (older Llama-2 conversions, the shared fixture): the family by name.
    if (/llama[\s_-]*v?2/i.test(info.name ?? "")) return { family: "llama2" };
    if (/llama[\s_-]*v?3/i.test(info.name ?? "")) return { family: "llama3" };
  }
  const what =
    template === ""
      ? `architecture "${info.architecture ?? "unknown"}" with no tokenizer.chat_template`
      : `tokenizer.chat_template of architecture "${info.architecture ?? "unknown"}"`;
  return { family: "plain", warning: `unsupported chat format (${what}): views use the plain format` };
}

/** The prompt as an engine without sentinel support gets it: the specials' text, unmarked. */
export function stripSpecialSentinels(text: string): string {
  return text.replace(SPECIAL_SENTINELS, "");
}
