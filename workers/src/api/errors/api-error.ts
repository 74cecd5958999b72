/** OpenAI-style error `type`s; clients branch on `code`, humans read `message`. */
export type ApiErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "conflict_error"
  | "rate_limit_error"
  | "insufficient_quota"
  | "server_error";

export interface ApiErrorInit {
  status: number;
  type: ApiErrorType;
  code: string;
  message: string;
  param?: string | null;
  /** Sent with the error response, e.g. `retry-after` or `x-should-retry`. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** An error the edge answers with: the HTTP status, the envelope fields and any headers that go with it. */
export class ApiError extends Error {
  override name = "ApiError";
  readonly status: number;
  readonly type: ApiErrorType;
  readonly code: string;
  readonly param: string | null;
  readonly headers: Readonly<Record<string, string>>;

  constructor(init: ApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param ?? null;
    this.headers = init.headers ?? {};
  }
}
