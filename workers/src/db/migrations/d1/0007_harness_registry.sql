CREATE TABLE `harness_label_history` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`revision` integer NOT NULL,
	`from_harness` text,
	`from_canary_harness` text,
	`from_canary_percent` integer,
	`to_harness` text NOT NULL,
	`to_canary_harness` text,
	`to_canary_percent` integer,
	`reason` text,
	`actor` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `harness_label_history_by_label` ON `harness_label_history` (`tenant_id`,`name`,`seq`);--> statement-breakpoint
CREATE TABLE `harness_labels` (
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`harness` text NOT NULL,
	`canary_harness` text,
	`canary_percent` integer,
	`revision` integer NOT NULL,
	`updated_by` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `name`)
);
--> statement-breakpoint
CREATE TABLE `harness_versions` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`owner` text NOT NULL,
	`hash` text NOT NULL,
	`document` text NOT NULL,
	`bytes` integer NOT NULL,
	`parent` text,
	`message` text,
	`created_by` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `harness_versions_by_owner_hash` ON `harness_versions` (`owner`,`hash`);