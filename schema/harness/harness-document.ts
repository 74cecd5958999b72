import {
  adapterLabel,
  findSpecialist,
  harnessFieldsSchema,
  type HarnessDocument,
} from "./harness-settings.ts";
import { measureViewRoom, readMaxUserMessageBytes } from "./measure-view-room.ts";
import { renderSummarySuffix } from "./render-view-lines.ts";
import { countUtf8Bytes } from "./utf8.ts";

export type { HarnessDocument, HarnessDocumentInput } from "./harness-settings.ts";

/**
 * Only once every field passed: zod runs refinements after issues that do not abort (a bad record key, a string
 * off its pattern), and the checks across fields read those fields as valid (an adapter name is parsed).
 */
const whenFieldsValid = { when: (payload: { issues: readonly unknown[] }) => payload.issues.length === 0 };

/** The versioned harness: every prompt, template, budget and hop setting a turn runs under. */
export const harnessDocumentSchema = harnessFieldsSchema.superRefine((doc, ctx) => {
  for (const issue of checkHarnessDocument(doc)) {
    ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
  }
}, whenFieldsValid);

export interface HarnessIssue {
  path: string[];
  message: string;
}

/**
 * What the schema's field types cannot say: the labels and the specialists agree, and every hop fits the
 * context in the worst case (one token per byte), so no conversation can fail for length.
 */
export function checkHarnessDocument(harness: HarnessDocument): HarnessIssue[] {
  const issues = checkLabels(harness);
  if (issues.length > 0) return issues;
  return [...checkCompaction(harness), ...checkBudgets(harness)];
}

function checkLabels(harness: HarnessDocument): HarnessIssue[] {
  const { router, specialists, defaultLabel } = harness;
  const issues: HarnessIssue[] = [];
  const keys = Object.keys(specialists).sort();
  const labels = [...router.labels].sort();
  if (new Set(labels).size !== labels.length) issues.push(at(["router", "labels"], "labels must be unique"));
  if (keys.join("\n") !== labels.join("\n")) {
    issues.push(at(["specialists"], "specialists must be exactly the router's labels"));
  }
  for (const key of keys) {
    const adapter = specialists[key]?.adapter;
    if (adapter === undefined || adapterLabel(adapter) !== key)
      issues.push(at(["specialists", key, "adapter"], "must be the label, or the label@<rev>"));
  }
  if (router.labels.includes(adapterLabel(router.adapter)))
    issues.push(at(["router", "adapter"], "must not be a label"));
  if (!router.labels.includes(defaultLabel)) issues.push(at(["defaultLabel"], "must be one of the labels"));
  (router.exemplars ?? []).forEach((exemplar, i) => {
    if (!router.labels.includes(exemplar.label))
      issues.push(at(["router", "exemplars", String(i), "label"], "must be one of the labels"));
  });
  const genuiLabels = harness.genui?.labels ?? [];
  if (new Set(genuiLabels).size !== genuiLabels.length)
    issues.push(at(["genui", "labels"], "labels must be unique"));
  genuiLabels.forEach((label, i) => {
    if (!router.labels.includes(label))
      issues.push(at(["genui", "labels", String(i)], "must be one of the labels"));
  });
  const maxLabelBytes = Math.max(...router.labels.map(countUtf8Bytes));
  if (router.reasoningMaxTokens + maxLabelBytes > router.maxTokens) {
    issues.push(at(["router", "maxTokens"], "must cover reasoningMaxTokens plus the longest label's bytes"));
  }
  return issues;
}

function checkCompaction(harness: HarnessDocument): HarnessIssue[] {
  const { keepFullFraction, compactMaxFraction, compactKeepFraction } = harness.compaction;
  const issues: HarnessIssue[] = [];
  if (keepFullFraction + compactMaxFraction >= 1) {
    issues.push(at(["compaction"], "keepFullFraction + compactMaxFraction must leave room for new turns"));
  }
  if (compactKeepFraction > compactMaxFraction) {
    issues.push(at(["compaction", "compactKeepFraction"], "must not exceed compactMaxFraction"));
  }
  return issues;
}

function checkBudgets(harness: HarnessDocument): HarnessIssue[] {
  const { router, templates, contextTokens } = harness;
  const issues: HarnessIssue[] = [];
  const maxUserBytes = readMaxUserMessageBytes(harness);
  const userLineBytes = (textBytes: number) =>
    countUtf8Bytes(templates.userPrefix) + textBytes + countUtf8Bytes(templates.userEnd ?? templates.lineEnd);
  // Four bytes per code point at worst, plus the truncation mark.
  const routerUserBytes = Math.min(
    maxUserBytes,
    4 * router.maxUserMessageChars + countUtf8Bytes(templates.clippedMark),
  );
  if (measureViewRoom(harness, router.adapter).roomBytes < userLineBytes(routerUserBytes)) {
    issues.push(
      at(
        ["router", "viewBudgetBytes"],
        "too small for the header (system line and exemplars), one user line and the route line",
      ),
    );
  }
  if (router.viewBudgetBytes + router.maxTokens > contextTokens) {
    issues.push(at(["router", "viewBudgetBytes"], "view + route tokens exceed contextTokens"));
  }
  for (const label of router.labels) {
    const specialist = findSpecialist(harness, label);
    if (!specialist) continue;
    const room = measureViewRoom(harness, label);
    if (room.roomBytes < userLineBytes(maxUserBytes)) {
      issues.push(
        at(["specialists", label, "viewBudgetBytes"], "too small for the header, a user line and an answer"),
      );
    }
    const prefixBytes = countUtf8Bytes(specialist.answerPrefix ?? "");
    // The view clips an answer to answerViewMaxBytes from its head: a prefix the clip could cut would leave the
    // answer prompt no longer a prefix of the view after it.
    if (
      prefixBytes > 0 &&
      prefixBytes + countUtf8Bytes(templates.clippedMark) > specialist.answerViewMaxBytes
    ) {
      issues.push(
        at(["specialists", label, "answerPrefix"], "longer than answerViewMaxBytes less the clipped mark"),
      );
    }
    const answerPromptBytes =
      room.budgetBytes - room.reserveBytes + countUtf8Bytes(templates.assistantCue) + prefixBytes;
    if (answerPromptBytes + specialist.sampling.maxTokens > contextTokens) {
      issues.push(
        at(["specialists", label, "sampling", "maxTokens"], "answer prompt + maxTokens exceed contextTokens"),
      );
    }
    const summaryPromptBytes =
      room.budgetBytes + countUtf8Bytes(renderSummarySuffix(harness, specialist.summary.instruction));
    if (summaryPromptBytes + specialist.summary.maxTokens > contextTokens) {
      issues.push(
        at(["specialists", label, "summary"], "view + summary prompt + maxTokens exceed contextTokens"),
      );
    }
  }
  return issues;
}

function at(path: string[], message: string): HarnessIssue {
  return { path, message };
}
