import { describe, expect, it } from "vitest";
import { formatHelp } from "../../infra/cli/cli-help.ts";
import { formatConversation } from "../../workers/src/api/format/format-conversation.ts";
import { formatItemList } from "../../workers/src/api/format/format-item-list.ts";
import { jsonResponse } from "./mesh-fixtures.ts";
import { runCliInMemory } from "./run-cli-in-memory.ts";

describe("molmesh help and usage errors", { timeout: 10_000 }, () => {
  it.each([["--help"], ["-h"], ["help"]])(
    "%s prints the general help on stdout and exits 0",
    async (flag) => {
      const run = await runCliInMemory({ argv: [flag] });

      expect(run.code).toBe(0);
      expect(run.stdout).toBe(formatHelp());
      expect(run.stdout).toContain("molmesh chat [--conversation <id>] [--model mol|mol:<label>]");
      expect(run.stderr).toBe("");
    },
  );

  it.each([
    [["chat", "--help"], "chat"],
    [["help", "items"], "items"],
    [["conversations", "-h", "--limit", "nonsense"], "conversations"],
  ] as const)("%j prints the help of %s", async (argv, topic) => {
    const run = await runCliInMemory({ argv: [...argv] });

    expect(run.code).toBe(0);
    expect(run.stdout).toBe(formatHelp(topic));
    expect(run.stdout).toMatch(new RegExp(`^molmesh ${topic}: `));
  });

  it("prints the general help on stderr and exits 2 without a command", async () => {
    const run = await runCliInMemory({ argv: [] });

    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(formatHelp());
  });

  it.each([
    [["frobnicate"], "molmesh: unknown command 'frobnicate'\n(see molmesh --help)\n"],
    [["chat", "--bogus"], "molmesh: Unknown option '--bogus'\n(see molmesh --help)\n"],
    [["chat", "--limit", "3"], "molmesh: chat does not take --limit\n(see molmesh chat --help)\n"],
    [["chat", "extra"], "molmesh: chat takes no arguments, got 'extra'\n(see molmesh chat --help)\n"],
    [
      ["chat", "--model", "gpt-4o"],
      "molmesh: --model must be mol or mol:<label>, got 'gpt-4o'\n(see molmesh chat --help)\n",
    ],
    [["items"], "molmesh: items needs a conversation id\n(see molmesh items --help)\n"],
    [
      ["items", "a", "b"],
      "molmesh: items takes one conversation id, got 'a b'\n(see molmesh items --help)\n",
    ],
    [
      ["items", "a", "--limit", "101"],
      "molmesh: --limit must be a whole number from 1 to 100, got '101'\n(see molmesh items --help)\n",
    ],
    [
      ["conversations", "--limit", "2.5"],
      "molmesh: --limit must be a whole number from 1 to 100, got '2.5'\n(see molmesh conversations --help)\n",
    ],
    [
      ["conversations", "--order", "up"],
      "molmesh: --order must be asc or desc, got 'up'\n(see molmesh conversations --help)\n",
    ],
    [
      ["conversations", "--after"],
      "molmesh: Option '--after <value>' argument missing\n(see molmesh --help)\n",
    ],
    [
      ["conversations", "--base-url", "ftp://x"],
      "molmesh: --base-url must be http(s), got 'ftp://x'\n(see molmesh --help)\n",
    ],
    [
      ["conversations", "--base-url", "not a url"],
      "molmesh: --base-url is not a URL: 'not a url'\n(see molmesh --help)\n",
    ],
  ])("%j is a usage error: exit 2, no request", async (argv, stderr) => {
    const run = await runCliInMemory({ argv });

    expect(run.code).toBe(2);
    expect(run.stderr).toBe(stderr);
    expect(run.stdout).toBe("");
    expect(run.requests).toEqual([]);
  });
});

describe("molmesh connection settings", { timeout: 10_000 }, () => {
  const emptyList = () =>
    jsonResponse(formatItemList([formatConversation({ id: "c", createdAt: 0 })], { hasMore: false }));

  it("takes flags over MOL_BASE_URL / MOL_API_KEY over MOL_DEV_API_KEY, and accepts a base URL ending in /v1", async () => {
    const env = { MOL_BASE_URL: "http://env.example:1", MOL_API_KEY: "sk-env", MOL_DEV_API_KEY: "sk-dev" };
    const fromFlags = await runCliInMemory({
      argv: ["--base-url", "https://mesh.example/v1/", "conversations", "--api-key", "sk-flag"],
      env,
      handle: emptyList,
    });
    const fromEnv = await runCliInMemory({ argv: ["conversations"], env, handle: emptyList });
    const devKey = await runCliInMemory({
      argv: ["conversations"],
      env: { MOL_DEV_API_KEY: "sk-dev" },
      handle: emptyList,
    });

    expect(fromFlags.code).toBe(0);
    expect(fromFlags.requests[0]).toMatchObject({
      origin: "https://mesh.example",
      path: "/v1/conversations",
      authorization: "Bearer sk-flag",
    });
    expect(fromEnv.requests[0]).toMatchObject({
      origin: "http://env.example:1",
      authorization: "Bearer sk-env",
    });
    expect(devKey.requests[0]).toMatchObject({
      origin: "http://127.0.0.1:8787",
      authorization: "Bearer sk-dev",
    });
  });

  it("names the base URL and the network cause when the mesh cannot be reached", async () => {
    const run = await runCliInMemory({
      argv: ["conversations", "--base-url", "http://127.0.0.1:9"],
      handle: () => {
        throw new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 127.0.0.1:9") });
      },
    });

    expect(run.code).toBe(1);
    expect(run.stderr).toBe("molmesh: cannot reach http://127.0.0.1:9: connect ECONNREFUSED 127.0.0.1:9\n");
  });
});
