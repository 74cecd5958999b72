-- A label's history is append-only, like the audit log: the database itself refuses to rewrite or drop it.
CREATE TRIGGER `harness_label_history_no_update` BEFORE UPDATE ON `harness_label_history`
BEGIN
	SELECT RAISE(ABORT, 'harness_label_history is append-only');
END;
--> statement-breakpoint
CREATE TRIGGER `harness_label_history_no_delete` BEFORE DELETE ON `harness_label_history`
BEGIN
	SELECT RAISE(ABORT, 'harness_label_history is append-only');
END;
