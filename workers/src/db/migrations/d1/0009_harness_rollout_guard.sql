CREATE TABLE `harness_rollout_counts` (
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`canary_harness` text NOT NULL,
	`arm` text NOT NULL,
	`turns` integer NOT NULL,
	`failures` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `name`, `canary_harness`, `arm`)
);
--> statement-breakpoint
ALTER TABLE `harness_labels` ADD `guard` text;