import { checkHarnessDocument } from "./check-harness-document.ts";
import { harnessFieldsSchema } from "./harness-settings.ts";

/** The versioned harness: every prompt, template, budget and hop setting a turn runs under. */
export const harnessDocumentSchema = harnessFieldsSchema.superRefine((doc, ctx) => {
  for (const issue of checkHarnessDocument(doc)) {
    ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
  }
});

export type { HarnessDocument, HarnessDocumentInput } from "./harness-settings.ts";
