import { describe, expect, it } from "vitest";
import { adapterEnvName as launcherAdapterEnvName } from "../../infra/local/resolve-local-models.ts";
import {
  adapterEnvName,
  ConfigError,
  defaultRouteThreadCount,
  defaultThreadCount,
  parseNodeConfig,
} from "../../gpu-nodes/src/config/node-config.ts";

describe("GPU node configuration", () => {
  it("fills defaults and reads per-adapter LoRA paths", () => {
    const config = parseNodeConfig({ MOL_BASE_MODEL: "/m/base.gguf", MOL_ADAPTER_CODING: "/m/coding.gguf" });
    expect(config.env).toMatchObject({
      MOL_ENGINE: "embedded",
      MOL_CONTEXT_SIZE: 4096,
      MOL_SLOTS_PER_ADAPTER: 4,
    });
    expect([...config.adapterPaths]).toEqual([
      ["l0", undefined],
      ["chat", undefined],
      ["agent", undefined],
      ["coding", "/m/coding.gguf"],
      ["genui", undefined],
    ]);
  });

  it("names every bad variable at once", () => {
    try {
      parseNodeConfig({ MOL_ENGINE: "openai-http", MOL_THREADS: "0", MOL_HEARTBEAT_TTL_MS: "1000" });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      for (const name of ["MOL_ENGINE_URL", "MOL_ENGINE_MODEL", "MOL_THREADS"])
        expect(message).toContain(name);
    }
  });

  it("reads MOL_CACHE_SALT_SECRET trimmed, and a blank one as unset", () => {
    const engine = {
      MOL_ENGINE: "openai-http",
      MOL_ENGINE_URL: "http://10.0.0.5:8000",
      MOL_ENGINE_MODEL: "m",
    };
    const secret = parseNodeConfig({ ...engine, MOL_CACHE_SALT_SECRET: " s3cret " }).env;
    expect(secret.MOL_CACHE_SALT_SECRET).toBe("s3cret");
    expect(
      parseNodeConfig({ ...engine, MOL_CACHE_SALT_SECRET: "  " }).env.MOL_CACHE_SALT_SECRET,
    ).toBeUndefined();
  });

  it("rejects a heartbeat TTL shorter than two beats", () => {
    expect(() =>
      parseNodeConfig({
        MOL_BASE_MODEL: "x",
        MOL_HEARTBEAT_INTERVAL_MS: "2000",
        MOL_HEARTBEAT_TTL_MS: "3000",
      }),
    ).toThrow(/MOL_HEARTBEAT_TTL_MS/);
  });

  it("leaves one core to Node's event loop, but lets a route hop running alone prefill on every core", () => {
    expect([1, 2, 4, 16].map(defaultThreadCount)).toEqual([1, 1, 3, 8]);
    expect([1, 2, 4, 16].map(defaultRouteThreadCount)).toEqual([1, 2, 4, 8]);
    expect(
      parseNodeConfig({ MOL_BASE_MODEL: "/m/b.gguf", MOL_ROUTE_THREADS: "3" }).env.MOL_ROUTE_THREADS,
    ).toBe(3);
    expect(() => parseNodeConfig({ MOL_BASE_MODEL: "/m/b.gguf", MOL_ROUTE_THREADS: "0" })).toThrow(
      /MOL_ROUTE_THREADS/,
    );
  });

  it("reads adapter paths from the variables the local launcher sets", () => {
    for (const id of ["chat", "l0", "my-lora", "a_b-c"]) {
      expect(launcherAdapterEnvName(id)).toBe(adapterEnvName(id));
      const config = parseNodeConfig({
        MOL_BASE_MODEL: "/m/b.gguf",
        MOL_ADAPTERS: id,
        [launcherAdapterEnvName(id)]: "/m/x.gguf",
      });
      expect(config.adapterPaths.get(id)).toBe("/m/x.gguf");
    }
  });
});
