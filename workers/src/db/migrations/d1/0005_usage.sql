CREATE TABLE `usage_daily` (
	`tenant_id` text NOT NULL,
	`day` text NOT NULL,
	`key_id` text NOT NULL,
	`end_user` text NOT NULL,
	`adapter` text NOT NULL,
	`requests` integer NOT NULL,
	`hops` integer NOT NULL,
	`input_tokens` integer NOT NULL,
	`cached_input_tokens` integer NOT NULL,
	`output_tokens` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `day`, `key_id`, `end_user`, `adapter`)
);
--> statement-breakpoint
CREATE TABLE `usage_hops` (
	`tenant_id` text NOT NULL,
	`turn_id` text NOT NULL,
	`hop` text NOT NULL,
	`key_id` text NOT NULL,
	`end_user` text NOT NULL,
	`adapter` text NOT NULL,
	`day` text NOT NULL,
	`requests` integer NOT NULL,
	`input_tokens` integer NOT NULL,
	`cached_input_tokens` integer NOT NULL,
	`output_tokens` integer NOT NULL,
	`estimated` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `turn_id`, `hop`)
);
--> statement-breakpoint
CREATE INDEX `usage_hops_by_time` ON `usage_hops` (`created_at`);