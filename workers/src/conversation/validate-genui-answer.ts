import type { TimelineEventOf } from "../db/timeline-event.ts";
import { extractComponentSource } from "../genui/extract-component-source.ts";
import type { GenuiComponentStore } from "../genui/genui-component-store.ts";
import { storeValidComponent } from "../genui/store-component.ts";
import { validateComponent, type GenuiValidationReport } from "../genui/validate-component.ts";

const SUMMARY_FINDINGS = 5;
const SUMMARY_MAX_CHARS = 2000;

/** What the step needs beyond the turn: where valid components go, ids, the clock. */
export interface GenuiAnswerDeps {
  components: GenuiComponentStore;
  newId: (prefix: string) => string;
  now: () => number;
}

export interface GenuiAnswer {
  /** The labels whose answers are components: the harness's `genui.labels` (readGenuiSettings). */
  genuiLabels: readonly string[];
  turnId: string;
  tenantId: string;
  label: string;
  text: string;
  /** The API origin the turn came in on; without it (a detached turn) nothing is stored. */
  apiOrigin?: string | undefined;
}

/**
 * The turn loop's genui step, after the answer is appended: a genui answer's component is validated by the
 * edge validator (the same one `POST /v1/genui/components` uses) and, when valid and the turn knows its API
 * origin, stored with a render link. Returns the `genui_validation` event, or undefined for a label not under the GenUI contract.
 * A storage failure still returns the verdict, without a component id: the answer itself is already stored.
 */
export async function validateGenuiAnswer(
  deps: GenuiAnswerDeps | undefined,
  answer: GenuiAnswer,
): Promise<TimelineEventOf<"genui_validation"> | undefined> {
  if (!answer.genuiLabels.includes(answer.label)) return undefined;
  const source = extractComponentSource(answer.text);
  const { report, compiled } = validateComponent(source);
  const verdict: TimelineEventOf<"genui_validation"> = {
    type: "genui_validation",
    turnId: answer.turnId,
    status: report.status,
    findings: report.findings.length,
    summary: summarizeFindings(report),
  };
  if (report.status !== "valid" || compiled === undefined || !deps || !answer.apiOrigin) return verdict;
  try {
    const { component, renderUrl } = await storeValidComponent(deps.components, {
      id: deps.newId("gc"),
      tenantId: answer.tenantId,
      source,
      compiled,
      report,
      apiOrigin: answer.apiOrigin,
      nowSeconds: Math.floor(deps.now() / 1000),
    });
    return {
      ...verdict,
      componentId: component.id,
      renderUrl,
      renderUrlExpiresAt: component.renderTokenExpiresAt,
    };
  } catch {
    return verdict;
  }
}

function summarizeFindings(report: GenuiValidationReport): string {
  const lines = report.findings
    .slice(0, SUMMARY_FINDINGS)
    .map((f) => `${f.rule} ${f.line}:${f.column} ${f.message}`);
  const more = report.findings.length - SUMMARY_FINDINGS;
  if (more > 0) lines.push(`… and ${more} more`);
  return lines.join("\n").slice(0, SUMMARY_MAX_CHARS);
}
