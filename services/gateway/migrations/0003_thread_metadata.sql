-- A thread's metadata (e.g. config.max_working_memory_messages), set when
-- AppendMessages creates the thread or by UpdateThread; BuildContext reads it.
ALTER TABLE threads ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}'::jsonb;
