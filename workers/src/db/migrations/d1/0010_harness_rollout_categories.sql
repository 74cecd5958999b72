CREATE TABLE `harness_rollout_turns` (
	`tenant_id` text NOT NULL,
	`turn_id` text NOT NULL,
	`name` text NOT NULL,
	`canary_harness` text NOT NULL,
	`arm` text NOT NULL,
	`failed` integer NOT NULL,
	`feedback_negative` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`tenant_id`, `turn_id`)
);
--> statement-breakpoint
ALTER TABLE `harness_rollout_counts` ADD `turn_failed` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `harness_rollout_counts` ADD `genui_rejected` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `harness_rollout_counts` ADD `json_output_invalid` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `harness_rollout_counts` ADD `tool_arguments_invalid` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `harness_rollout_counts` ADD `check_failed` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `harness_rollout_counts` ADD `feedback_negative` integer DEFAULT 0 NOT NULL;