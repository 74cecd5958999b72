import { describe, expect, it } from "vitest";
import {
  composeJsonGrammar,
  composeToolsAndFormatGrammar,
  numberRule,
  tightenJsonSchemaGrammar,
} from "../../gpu-nodes/src/engine/llama/constraint-grammars.ts";
import { encodeNumberSentinel } from "../../schema/tools/json-schema-convert.ts";
import { MolWireError } from "../../schema/wire/v2/index.ts";

/** The shape node-llama-cpp 3.21 generates for `{type: "object", properties: {n: integer, x: number}}`. */
const GENERATED = [
  'root ::= rule0 "\\n\\n\\n\\n" [\\n]*',
  'integer-number-rule ::= "-"? ("0" | [1-9] [0-9]{0,15}) ([eE] [-+]? ("0" | [1-9] [0-9]{0,15}))?',
  'fractional-number-rule ::= "-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? ("0" | [1-9] [0-9]{0,15}))?',
  'rule0 ::= "{" "\\"n\\"" ":" integer-number-rule "," "\\"x\\"" ":" fractional-number-rule "}"',
].join("\n");

describe("JSON schema grammars for llama.cpp", () => {
  it("drops integer exponents, bounds number exponents and ends at the value", () => {
    const tight = tightenJsonSchemaGrammar(GENERATED);
    expect(tight).toContain('integer-number-rule ::= "-"? ("0" | [1-9] [0-9]{0,15})\n');
    expect(tight).toContain('("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,2})?');
    expect(tight.split("\n")[0]).toBe("molmesh-json ::= rule0");
  });

  it("composes the tool-call language: text or marker + call under auto, the call alone otherwise", () => {
    expect(composeJsonGrammar(GENERATED, "json").split("\n")[0]).toBe("root ::= molmesh-json");
    expect(composeJsonGrammar(GENERATED, "required").split("\n")[0]).toBe(
      'root ::= "<tool_call>" molmesh-json',
    );
    const auto = composeJsonGrammar(GENERATED, "auto").split("\n");
    expect(auto.slice(0, 2)).toEqual([
      'root ::= molmesh-text | "<tool_call>" molmesh-json',
      "molmesh-text ::= [^<] [^\\x00]*",
    ]);
  });

  it("refuses a generated grammar it does not recognise instead of constraining loosely", () => {
    expect(() => tightenJsonSchemaGrammar('root ::= rule0\nrule0 ::= "x"')).toThrow(MolWireError);
    const changed = GENERATED.replaceAll("[0-9]{0,15}))?", "[0-9]{0,9}))?");
    expect(() => tightenJsonSchemaGrammar(changed)).toThrow(/number rules changed/);
    const renamed = tightenJsonSchemaGrammar(GENERATED.replaceAll("integer-number-rule", "int-rule"));
    expect(renamed).toContain('int-rule ::= "-"? ("0" | [1-9] [0-9]{0,15})\n');
  });

  it("swaps a bounded number's sentinel for its rule: sign and digit count held, safe integers exact", () => {
    // node-llama-cpp writes a string const as one literal rule: `val0 ::= "\"…\""`.
    const literal = (spec: Parameters<typeof encodeNumberSentinel>[0]): string =>
      JSON.stringify(JSON.stringify(encodeNumberSentinel(spec)));
    const generated = [
      'root ::= rule0 "\\n\\n\\n\\n" [\\n]*',
      `val0 ::= ${literal({ integer: true, sign: "any", digits: 15, exponent: false })}`,
      `val1 ::= ${literal({ integer: true, sign: "nonNegative", digits: 15, exponent: false })}`,
      'rule0 ::= "{" "\\"n\\"" ":" val0 "," "\\"x\\"" ":" val1 "}"',
    ].join("\n");
    const tight = tightenJsonSchemaGrammar(generated);
    expect(tight).not.toContain("molmesh-number");
    expect(tight).toContain('("-"? ("0" | [1-9] [0-9]{0,14}))');
    expect(tight).toContain('(("0" | [1-9] [0-9]{0,14}))');
    expect(numberRule({ integer: false, sign: "positive", digits: 16, exponent: true })).toBe(
      '([1-9] [0-9]{0,15} ("." [0-9]{1,16})? | "0" "." [0-9]{0,15} [1-9]) ([eE] [-+]? [0-9]{1,2})?',
    );
    expect(numberRule({ integer: true, sign: "positive", digits: 1, exponent: false })).toBe("([1-9])");
  });

  it("splits one generated wrapper into the format's JSON or the marker and a call", () => {
    const wrapper = [
      'root ::= "{" ws "\\"molmesh-text\\"" ":" [ ]? rule0 "," "\\"molmesh-call\\"" ":" [ ]? rule3 ws "}" "\\n\\n\\n\\n" [\\n]*',
      'rule0 ::= "{" "\\"n\\"" ":" integer-number-rule "}"',
      'integer-number-rule ::= "-"? ("0" | [1-9] [0-9]{0,15}) ([eE] [-+]? ("0" | [1-9] [0-9]{0,15}))?',
      'rule3 ::= "{" "\\"name\\"" ":" "\\"f\\"" "}"',
      "ws ::= [ ]?",
    ].join("\n");
    const grammar = composeToolsAndFormatGrammar(wrapper).split("\n");
    expect(grammar[0]).toBe('root ::= rule0 | "<tool_call>" rule3');
    expect(grammar.some((line) => line.startsWith("molmesh-json ::="))).toBe(false);
    expect(grammar).toContain('integer-number-rule ::= "-"? ("0" | [1-9] [0-9]{0,15})');
    expect(() => composeToolsAndFormatGrammar(wrapper.replace("rule3 ::=", "other ::="))).toThrow(
      MolWireError,
    );
  });
});
