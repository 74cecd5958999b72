import { harnessPinHeaderFields, readHarnessPin } from "../read-harness-pin.ts";
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { DEFAULT_HARNESS } from "../../../../schema/harness/default-harness.ts";
import { MAX_MESSAGE_BYTES } from "../../api/schemas/request-limits.ts";
import { formatChatCompletion, toChatCompletionId } from "../../api/format/format-chat-completion.ts";
import {
  createChatCompletionBodySchema,
  readChatCallNames,
  readChatMessageText,
} from "../../api/schemas/create-chat-completion-body-schema.ts";
import { fromChatFormat, fromChatTools, readTurnOutput } from "../../api/schemas/tool-fields.ts";
import { readChatSampling } from "../../api/schemas/read-sampling.ts";
import { resolveModel } from "../../api/schemas/resolve-model.ts";
import { createChatCompletionEventStream } from "../../api/sse/create-chat-completion-event-stream.ts";
import type { StatelessTurnRequest } from "../../conversation/conversation-rpc.ts";
import type { AppEnv } from "../app-deps.ts";
import { requireScope } from "../access-guards.ts";
import { SSE_HEADERS, collectTurn, openTurnStream } from "../serve-turn.ts";
import { admitTurn } from "../admit-turn.ts";
import { startStatelessTurn } from "../start-stateless-turn.ts";
import {
  JSON_BODY_ERRORS,
  TENANT_SECURITY,
  TURN_ERRORS,
  errorResponse,
  errorResponses,
  jsonOrEventStreamResponse,
  jsonBody,
} from "../route-contract.ts";

const chatCompletionRoute = createRoute({
  method: "post",
  path: "/v1/chat/completions",
  security: TENANT_SECURITY,
  ...jsonBody(createChatCompletionBodySchema({ maxMessageBytes: MAX_MESSAGE_BYTES }), {
    headers: z.object(harnessPinHeaderFields),
  }),
  responses: {
    200: jsonOrEventStreamResponse(
      "A chat completion, or its chunks as server-sent events with `stream: true`",
    ),
    ...errorResponses(...JSON_BODY_ERRORS, 401, 403, ...TURN_ERRORS),
    404: errorResponse(
      "Unknown model (`model_not_found`), or a harness pin (`x-mol-harness`, `metadata.mol_harness`) the tenant cannot see",
    ),
  },
});

/**
 * `POST /v1/chat/completions` for existing clients: stateless (the client sends the history), `model: "mol"`
 * routes per turn and `"mol:<label>"` forces a specialist. Each request runs on its own (see
 * start-stateless-turn.ts); `prompt_cache_key` (else `user`) keeps a client's chat on one GPU KV slot.
 */
export function registerChatCompletionRoutes(app: OpenAPIHono<AppEnv>): void {
  app.use("/v1/chat/*", requireScope("chat"));
  app.openapi(chatCompletionRoute, async (c) => {
    const body = c.req.valid("json");
    const model = resolveModel(body.model, DEFAULT_HARNESS.router.labels);
    const callNames = readChatCallNames(body.messages);
    const messages: StatelessTurnRequest["messages"] = [];
    body.messages.forEach((m, index) => {
      const content = readChatMessageText(m, callNames);
      // Tool results become user lines; the results of one round of calls share one.
      if (m.role === "tool" && body.messages[index - 1]?.role === "tool") {
        const previous = messages.at(-1);
        if (previous) previous.content += `\n${content}`;
        return;
      }
      const role = m.role === "developer" ? "system" : m.role === "tool" ? "user" : m.role;
      messages.push({ role, content });
    });
    const output = readTurnOutput({
      ...fromChatTools(body.tools, body.tool_choice),
      parallel: body.parallel_tool_calls,
      format: fromChatFormat(body.response_format),
    });
    const harnessPin = await readHarnessPin(c, body.metadata);
    const limitHeaders = await admitTurn(c);
    const result = await startStatelessTurn(c, {
      ...(harnessPin === undefined ? {} : { harnessPin }),
      messages,
      ...(model.kind === "forced" ? { forcedLabel: model.label } : {}),
      sampling: readChatSampling(body),
      apiOrigin: new URL(c.req.url).origin,
      cacheKey: body.prompt_cache_key ?? body.user,
      endUser: body.safety_identifier ?? body.user,
      ...output,
    });
    if (!result.ok) throw new Error("stateless turns are never refused");
    const parts = await openTurnStream(result.stream);
    const created = Math.floor(c.var.deps.now() / 1000);
    if (body.stream) {
      const id = toChatCompletionId(c.var.deps.newId("turn"));
      const includeUsage = body.stream_options?.include_usage === true;
      return new Response(
        createChatCompletionEventStream(parts, {
          id,
          model: body.model,
          created,
          includeUsage,
          keepAliveMs: 15_000,
        }),
        { headers: { ...SSE_HEADERS, ...limitHeaders } },
      );
    }
    return c.json(
      formatChatCompletion(await collectTurn(parts), { model: body.model, created }),
      200,
      limitHeaders,
    );
  });
}
