import { expect } from "vitest";

/** A response's JSON body, once its status is the expected one (the body is the failure's message otherwise). */
export async function readJson<T>(response: Response, status = 200): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as T;
}
