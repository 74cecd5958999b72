"""Schemathesis hooks for test/edge/schemathesis.test.ts (loaded through SCHEMATHESIS_HOOKS).

The OpenAPI document is generated from the zod schemas the handlers validate with, so every rule a JSON Schema
can state is in it. A few request rules relate several fields, or a field to stored or deployment state; a JSON
Schema cannot state them, OpenAI's own document does not either, and both APIs answer them with a 400 that names
the field. `positive_data_acceptance` sends schema-valid requests that break them, so its failures for exactly
these rules (operation, `param`, message) are dropped here; any other schema-valid request the API refuses
still fails the run. Each rule says why no schema holds it.
"""

from __future__ import annotations

import json
import re

import schemathesis
from schemathesis.openapi.checks import RejectedPositiveData

CHAT = "POST /v1/chat/completions"
RESPONSES = "POST /v1/responses"

# What schema/harness/harness-document.ts, harness-settings.ts and workers/src/steps/step-registry.ts refuse beyond
# the document's JSON Schema.
HARNESS_DOCUMENT_RULES = "|".join(
    [
        r"labels must be unique",
        r"exactly the router's labels",
        r"the label, or the label@<rev>",
        r"must not be a label",
        r"one of the labels",
        r"reasoningMaxTokens",
        r"room for new turns",
        r"must not exceed compactMaxFraction",
        r"too small for",
        r"exceed contextTokens",
        r"longer than answerViewMaxBytes",
        r"U\+E000",
        r"\{label\} and \{text\}",
        r"two steps are named",
        r"background steps must come last",
        r"harness turn program",
        r"Invalid key in record",
    ]
)

# (operation, status, param regex, message regex, why a JSON Schema cannot hold it)
BEYOND_SCHEMA: list[tuple[str, int, str, str, str]] = [
    # Chat Completions: the order of the messages and what they refer to.
    (CHAT, 400, r"^messages\[\d+\]\.tool_call_id$", r"must be a response to a preceding message", "refers to an earlier item"),
    (CHAT, 400, r"^messages\[\d+\]\.role$", r"^Invalid .*: the last message must be", "the last item's role"),
    (CHAT, 400, r"^messages\[\d+\]\.content$", r"the user message is empty|content is required", "content by position / by sibling field"),
    (CHAT, 400, r"^stream_options$", r"requires stream: true", "depends on a sibling field"),
    (CHAT, 400, r"^max_tokens$", r"not both", "two fields exclude each other"),
    # Responses: what the request continues, what `store: false` allows, what the input ends with.
    (RESPONSES, 400, r"^previous_response_id$", r"not both", "two fields exclude each other"),
    (RESPONSES, 400, r"^(store|background)$", r"always stored|cannot continue|must be stored", "depends on a sibling field"),
    (RESPONSES, 400, r"^input(\[\d+\])?$", r"input is empty|no stored items to reference", "whitespace-only text, or a sibling field"),
    (RESPONSES, 400, r"^input\[\d+\](\.role)?$", r"the last input item must be", "the last item's type and role"),
    (RESPONSES, 400, r"^input\[\d+\]\.call_id$", r"No tool call found", "refers to an earlier item"),
    # Both turn APIs: tool names against `tool_choice`, and the JSON Schemas a tool or a format carries (an object in
    # the document, as in OpenAI's; the subset checker names the keyword it does not decode).
    (CHAT, 400, r"^(tool_choice|tools\[\d+\]\.function\.name|response_format)$", r".", "refers to sibling items"),
    (RESPONSES, 400, r"^(tool_choice|tools\[\d+\]\.name|text\.format)$", r".", "refers to sibling items"),
    (CHAT, 400, r"\.(parameters|schema)$", r"^Invalid .*: (schema|Invalid schema for)", "a schema language of its own"),
    (RESPONSES, 400, r"\.(parameters|schema)$", r"^Invalid .*: (schema|Invalid schema for)", "a schema language of its own"),
    # Sizes summed over several fields (each message alone is within its limit).
    (CHAT, 400, r"^messages\[\d+\]\.content$", r"longer than \d+ bytes", "a byte count of joined parts"),
    (RESPONSES, 400, r"^(input|instructions)$", r"longer than \d+ bytes", "a byte count over several fields"),
    ("POST /v1/conversations/{id}/items", 400, r"^items$", r"longer than \d+ bytes", "a byte count over items"),
    # A range whose ends are two parameters.
    ("GET /v1/usage", 400, r"^from$", r"after 'to'", "two parameters ordered"),
    ("GET /v1/admin/tenants/{id}/usage", 400, r"^from$", r"after 'to'", "two parameters ordered"),
    # Webhook URLs: the SSRF policy (public hosts only, loopback on the local mesh) is the deployment's.
    ("POST /v1/webhook_endpoints", 400, r"^url$", r"not allowed", "deployment policy"),
    ("PATCH /v1/webhook_endpoints/{id}", 400, r"^url$", r"not allowed", "deployment policy"),
    # A cancel names a stored response; only a background one can be cancelled.
    ("POST /v1/responses/{id}/cancel", 400, r"^$", r"Only background responses", "stored state"),
    # An Idempotency-Key names the first request sent with it: another body under the same key is refused.
    (RESPONSES, 422, r"^$", r"Idempotency-Key was already used", "stored state"),
    # A GenUI component is a JSX module: the validator, not a schema, says whether it is one (422 with its report).
    ("POST /v1/genui/components", 422, r"^source$", r"rejected", "a program, checked by the validator"),
    # A harness document's fields checked against each other (labels and specialists, budgets against the context,
    # template placeholders, step names), the edge's step kinds and their options, record keys (a JSON Schema
    # `propertyNames` the generated document does not carry), and its size as canonical JSON.
    *[
        (operation, 400, r"^document(\.|\[|$)", HARNESS_DOCUMENT_RULES, "fields against each other, the edge's step kinds")
        for operation in ("POST /v1/harnesses", "POST /v1/admin/harnesses")
    ],
    # A specialist's output schema is a JSON Schema the subset checker reads (as a tool's parameters are).
    *[
        (operation, 400, r"^document\.specialists\..+\.output\.schema$", r".", "a schema language of its own")
        for operation in ("POST /v1/harnesses", "POST /v1/admin/harnesses")
    ],
    *[
        (operation, 413, r"^document$", r"bytes of canonical JSON", "a byte count of the whole document")
        for operation in ("POST /v1/harnesses", "POST /v1/admin/harnesses")
    ],
]


def _envelope(response) -> tuple[str, str] | None:
    try:
        error = json.loads(response.content)["error"]
    except (ValueError, KeyError, TypeError):
        return None
    return (error.get("param") or "", error.get("message") or "")


def is_beyond_schema(operation: str, status: int, param: str, message: str) -> bool:
    return any(
        operation == rule_operation
        and status == rule_status
        and re.search(param_pattern, param) is not None
        and re.search(message_pattern, message) is not None
        for rule_operation, rule_status, param_pattern, message_pattern, _why in BEYOND_SCHEMA
    )


@schemathesis.hook
def filter_failure(context, failure, case, response) -> bool:
    """Keeps every failure but a schema-valid request refused for one of the rules above."""
    if not isinstance(failure, RejectedPositiveData):
        return True
    envelope = _envelope(response)
    if envelope is None:
        return True
    param, message = envelope
    return not is_beyond_schema(case.operation.label, response.status_code, param, message)
