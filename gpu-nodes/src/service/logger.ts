/** The few logging calls the service makes; pino satisfies it, tests may pass a silent one. */
export interface NodeLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}
