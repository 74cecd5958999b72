import journal from "./meta/_journal.json";
import m0000 from "./0000_simple_demogoblin.sql";
import m0001 from "./0001_webhook_outbox.sql";
import m0002 from "./0002_timeline_event_type.sql";

export default {
  journal,
  migrations: {
    m0000,
    m0001,
    m0002,
  },
};
