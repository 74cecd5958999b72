CREATE TABLE `webhook_outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`event_type` text NOT NULL,
	`body` text NOT NULL,
	`created_at` integer NOT NULL
);
