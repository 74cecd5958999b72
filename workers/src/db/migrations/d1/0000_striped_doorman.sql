CREATE TABLE `conversation_index` (
	`tenant_id` text NOT NULL,
	`id` text NOT NULL,
	`created_at` integer NOT NULL,
	`metadata` text NOT NULL,
	PRIMARY KEY(`tenant_id`, `id`)
);
--> statement-breakpoint
CREATE INDEX `conversation_index_by_time` ON `conversation_index` (`tenant_id`,`created_at`,`id`);