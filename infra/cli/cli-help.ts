import type { CommandName } from "./parse-cli-args.ts";

const CONNECTION = `Connection (every command):
  --base-url <url>   mesh root URL (env MOL_BASE_URL; default http://127.0.0.1:8787)
  --api-key <key>    API key (env MOL_API_KEY, then MOL_DEV_API_KEY; default sk-molmesh-dev-local)
  -h, --help         this help`;

const EXIT_CODES = "Exit codes: 0 ok, 1 API or network error, 2 usage error, 130 interrupted (Ctrl-C).";

const GENERAL = `molmesh: talk to a molmesh mesh (Mixture-of-LoRA agents) over its OpenAI-compatible API.

Usage:
  molmesh chat [--conversation <id>] [--model mol|mol:<label>] [--json]
  molmesh conversations [--limit <n>] [--after <id>] [--order asc|desc] [--json]
  molmesh items <conversation-id> [--limit <n>] [--after <id>] [--order asc|desc] [--json]
  molmesh help [<command>]

${CONNECTION}

${EXIT_CODES}
`;

const COMMANDS: Record<CommandName, string> = {
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
};

export function formatHelp(topic?: CommandName): string {
  return topic === undefined ? GENERAL : COMMANDS[topic];
}
