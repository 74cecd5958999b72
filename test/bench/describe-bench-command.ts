/**
 * The command that reproduces a figure: the npm script with the knobs this run was given, so a smoke-sized or
 * tuned run never passes for the default one.
 */
export function describeBenchCommand(script: string, knobs: readonly string[]): string {
  const set = knobs
    .filter((name) => process.env[name] !== undefined)
    .map((name) => `${name}=${process.env[name]}`);
  return [...set, `npm run ${script}`].join(" ");
}
