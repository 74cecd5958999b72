CREATE TABLE `webhook_attempt` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`message_id` text NOT NULL,
	`started_at` integer NOT NULL,
	`duration_ms` integer NOT NULL,
	`status_code` integer,
	`error` text,
	`outcome` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_attempt_by_message` ON `webhook_attempt` (`message_id`,`seq`);--> statement-breakpoint
CREATE TABLE `webhook_message` (
	`id` text PRIMARY KEY NOT NULL,
	`event_type` text NOT NULL,
	`body` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`last_status_code` integer,
	`last_error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_message_due` ON `webhook_message` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `webhook_message_by_time` ON `webhook_message` (`created_at`,`id`);