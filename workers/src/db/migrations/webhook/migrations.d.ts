/** drizzle-kit writes migrations.js (SQL files imported as text by wrangler's `Text` rule). */
declare const migrations: {
  journal: { entries: Array<{ idx: number; when: number; tag: string; breakpoints: boolean }> };
  migrations: Record<string, string>;
};
export default migrations;
