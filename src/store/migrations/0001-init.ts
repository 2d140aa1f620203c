import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { idColumn } from './columns.js';

export function init(dialect: Dialect) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await idColumn(db.schema.createTable('users'), dialect)
        .addColumn('username', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('password_hash', 'varchar(255)', (c) => c.notNull())
        .addColumn('display_name', 'varchar(128)', (c) => c.notNull().defaultTo(''))
        .addColumn('email', 'varchar(255)', (c) => c.notNull().defaultTo(''))
        .addColumn('role', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('status', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('default_model', 'varchar(255)', (c) => c.notNull().defaultTo(''))
        .addColumn('quota_limit_micros', 'bigint')
        .addColumn('quota_used_micros', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('created_time', 'bigint', (c) => c.notNull())
        .addColumn('updated_time', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('sessions')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('created_time', 'bigint', (c) => c.notNull())
        .addColumn('expires_time', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();

      await idColumn(db.schema.createTable('access_tokens'), dialect)
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'varchar(128)', (c) => c.notNull())
        .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('token_prefix', 'varchar(32)', (c) => c.notNull())
        .addColumn('created_time', 'bigint', (c) => c.notNull())
        .addColumn('expires_time', 'bigint')
        .addColumn('last_used_time', 'bigint')
        .execute();
      await db.schema.createIndex('access_tokens_user').on('access_tokens').column('user_id').execute();

      await idColumn(db.schema.createTable('api_keys'), dialect)
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'varchar(128)', (c) => c.notNull())
        .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('key_prefix', 'varchar(32)', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('expires_time', 'bigint')
        .addColumn('quota_limit_micros', 'bigint')
        .addColumn('quota_used_micros', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('allowed_models', 'text')
        .addColumn('rpm_limit', 'integer')
        .addColumn('tpm_limit', 'integer')
        .addColumn('created_time', 'bigint', (c) => c.notNull())
        .addColumn('updated_time', 'bigint', (c) => c.notNull())
        .addColumn('last_used_time', 'bigint')
        .execute();
      await db.schema.createIndex('api_keys_user').on('api_keys').column('user_id').execute();

      await idColumn(db.schema.createTable('apps'), dialect)
        .addColumn('name', 'varchar(128)', (c) => c.notNull())
        .addColumn('short_description', 'varchar(512)', (c) => c.notNull().defaultTo(''))
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('category', 'varchar(32)', (c) => c.notNull().defaultTo('general'))
        .addColumn('version', 'varchar(64)', (c) => c.notNull().defaultTo(''))
        .addColumn('author', 'varchar(128)', (c) => c.notNull().defaultTo(''))
        .addColumn('author_url', 'varchar(2048)', (c) => c.notNull().defaultTo(''))
        .addColumn('thumbnail_url', 'varchar(2048)', (c) => c.notNull().defaultTo(''))
        .addColumn('download_url', 'varchar(2048)', (c) => c.notNull().defaultTo(''))
        .addColumn('source_url', 'varchar(2048)', (c) => c.notNull().defaultTo(''))
        .addColumn('documentation_url', 'varchar(2048)', (c) => c.notNull().defaultTo(''))
        .addColumn('tags', 'varchar(2048)', (c) => c.notNull().defaultTo(''))
        .addColumn('status', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('featured', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('download_count', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('created_time', 'bigint', (c) => c.notNull())
        .addColumn('updated_time', 'bigint', (c) => c.notNull())
        .addColumn('created_by', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('updated_by', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex('apps_name').on('apps').column('name').execute();
      await db.schema
        .createIndex('apps_status_created')
        .on('apps')
        .columns(['status', 'created_time', 'id'])
        .execute();
      await db.schema.createIndex('apps_category').on('apps').columns(['category', 'status']).execute();
      await db.schema.createIndex('apps_featured').on('apps').columns(['featured', 'status']).execute();

      await idColumn(db.schema.createTable('channels'), dialect)
        .addColumn('name', 'varchar(128)', (c) => c.notNull().unique())
        .addColumn('kind', 'varchar(32)', (c) => c.notNull())
        .addColumn('base_url', 'varchar(2048)', (c) => c.notNull().defaultTo(''))
        .addColumn('keys', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('models', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('model_mapping', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('weight', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('status', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('source', 'varchar(16)', (c) => c.notNull().defaultTo('api'))
        .addColumn('created_time', 'bigint', (c) => c.notNull())
        .addColumn('updated_time', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('models')
        .addColumn('id', 'varchar(255)', (c) => c.primaryKey())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('updated_time', 'bigint', (c) => c.notNull())
        .execute();

      await idColumn(db.schema.createTable('request_logs'), dialect)
        .addColumn('created_time', 'bigint', (c) => c.notNull())
        .addColumn('request_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('user_id', 'integer')
        .addColumn('key_id', 'integer')
        .addColumn('endpoint', 'varchar(64)', (c) => c.notNull())
        .addColumn('model', 'varchar(255)', (c) => c.notNull().defaultTo(''))
        .addColumn('provider', 'varchar(128)', (c) => c.notNull().defaultTo(''))
        .addColumn('channel_id', 'integer')
        .addColumn('prompt_tokens', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('completion_tokens', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('cost_micros', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('latency_ms', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('ttft_ms', 'integer')
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('error_kind', 'varchar(32)')
        .addColumn('stream', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('attempts', 'text')
        .execute();
      await db.schema.createIndex('request_logs_time').on('request_logs').columns(['created_time']).execute();
      await db.schema
        .createIndex('request_logs_user')
        .on('request_logs')
        .columns(['user_id', 'created_time'])
        .execute();
      await db.schema
        .createIndex('request_logs_key')
        .on('request_logs')
        .columns(['key_id', 'created_time'])
        .execute();

      await db.schema
        .createTable('kv')
        .addColumn('key', 'varchar(128)', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  };
}
