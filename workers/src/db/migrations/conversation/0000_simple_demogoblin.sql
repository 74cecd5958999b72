CREATE TABLE `conversation_meta` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`metadata` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `idempotency_key` (
	`key` text PRIMARY KEY NOT NULL,
	`request_hash` text NOT NULL,
	`turn_id` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `timeline_event` (
	`seq` integer PRIMARY KEY NOT NULL,
	`turn_id` text NOT NULL,
	`type` text NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `timeline_event_turn` ON `timeline_event` (`turn_id`,`seq`);--> statement-breakpoint
CREATE TABLE `view_snapshot` (
	`id` integer PRIMARY KEY NOT NULL,
	`through_seq` integer NOT NULL,
	`harness_hash` text NOT NULL,
	`state` text NOT NULL
);
