import type { Insertable } from 'kysely';
import type { AppsRepo } from '../store/apps-repo.js';
import type { AppsTable } from '../store/schema.js';
import { AppStatus } from './app-fields.js';

type SeedApp = Omit<
  Insertable<AppsTable>,
  | 'status'
  | 'created_time'
  | 'updated_time'
  | 'created_by'
  | 'updated_by'
  | 'download_count'
  | 'thumbnail_url'
  | 'version'
>;

/**
 * Example records for a fresh catalog: well-known open-source AI tools with their public
 * project URLs. Versions are left empty because they would be stale on the next release.
 */
export const SEED_APPS: SeedApp[] = [
  {
    name: 'Ollama',
    short_description: 'Get up and running with large language models on your own machine.',
    description:
      'Ollama downloads, runs and serves open models (Llama, Gemma, Mistral, Qwen and more) locally, with a CLI and an HTTP API compatible with OpenAI clients.',
    category: 'tools',
    author: 'Ollama',
    author_url: 'https://ollama.com',
    download_url: 'https://ollama.com/download',
    source_url: 'https://github.com/ollama/ollama',
    documentation_url: 'https://github.com/ollama/ollama/tree/main/docs',
    tags: 'llm,local,inference,cli',
    featured: 1,
  },
  {
    name: 'llama.cpp',
    short_description: 'LLM inference in plain C/C++ with minimal setup, on CPUs and GPUs.',
    description:
      'A dependency-free C/C++ implementation of LLM inference using the GGUF format, with quantization, an OpenAI-compatible server and bindings for many languages.',
    category: 'development',
    author: 'ggml-org',
    author_url: 'https://github.com/ggml-org',
    download_url: 'https://github.com/ggml-org/llama.cpp/releases',
    source_url: 'https://github.com/ggml-org/llama.cpp',
    documentation_url: 'https://github.com/ggml-org/llama.cpp/tree/master/docs',
    tags: 'llm,inference,gguf,c++',
    featured: 1,
  },
  {
    name: 'Open WebUI',
    short_description: 'A self-hosted web interface for chatting with local and remote models.',
    description:
      'An extensible, offline-capable chat interface that works with Ollama and OpenAI-compatible APIs, with document chat (RAG), user management and plugins.',
    category: 'productivity',
    author: 'Open WebUI',
    author_url: 'https://openwebui.com',
    download_url: 'https://github.com/open-webui/open-webui/releases',
    source_url: 'https://github.com/open-webui/open-webui',
    documentation_url: 'https://docs.openwebui.com',
    tags: 'chat,web ui,self-hosted,rag',
    featured: 1,
  },
  {
    name: 'LangChain',
    short_description: 'A framework for building applications powered by language models.',
    description:
      'Composable building blocks for LLM applications: model interfaces, prompts, retrieval, tools and agents, in Python and JavaScript.',
    category: 'development',
    author: 'LangChain',
    author_url: 'https://www.langchain.com',
    download_url: 'https://pypi.org/project/langchain/',
    source_url: 'https://github.com/langchain-ai/langchain',
    documentation_url: 'https://python.langchain.com',
    tags: 'framework,agents,rag,python',
    featured: 0,
  },
  {
    name: 'ComfyUI',
    short_description: 'A node-based interface for building image generation workflows.',
    description:
      'Design and run diffusion model pipelines (Stable Diffusion, Flux and others) as graphs of nodes, locally, with a large ecosystem of custom nodes.',
    category: 'tools',
    author: 'Comfy Org',
    author_url: 'https://www.comfy.org',
    download_url: 'https://github.com/comfyanonymous/ComfyUI/releases',
    source_url: 'https://github.com/comfyanonymous/ComfyUI',
    documentation_url: 'https://docs.comfy.org',
    tags: 'image generation,diffusion,workflow,nodes',
    featured: 0,
  },
  {
    name: 'Continue',
    short_description: 'An open-source AI code assistant for VS Code and JetBrains IDEs.',
    description:
      'Chat, autocomplete and edit code with any model, local or hosted, from inside the editor; configurable with your own models and context providers.',
    category: 'development',
    author: 'Continue',
    author_url: 'https://www.continue.dev',
    download_url: 'https://marketplace.visualstudio.com/items?itemName=Continue.continue',
    source_url: 'https://github.com/continuedev/continue',
    documentation_url: 'https://docs.continue.dev',
    tags: 'coding assistant,ide,vscode,autocomplete',
    featured: 0,
  },
  {
    name: 'Jan',
    short_description: 'A desktop app for running AI models offline, as a ChatGPT alternative.',
    description:
      'Jan runs open models locally on Windows, macOS and Linux, can also connect to remote APIs, and exposes a local OpenAI-compatible server.',
    category: 'general',
    author: 'Jan',
    author_url: 'https://jan.ai',
    download_url: 'https://jan.ai/download',
    source_url: 'https://github.com/janhq/jan',
    documentation_url: 'https://jan.ai/docs',
    tags: 'desktop,chat,offline,local',
    featured: 0,
  },
  {
    name: 'LocalAI',
    short_description: 'A drop-in, self-hosted replacement for the OpenAI API.',
    description:
      'Runs LLMs, image generation, audio transcription and embeddings on consumer hardware behind an OpenAI-compatible REST API, no GPU required.',
    category: 'tools',
    author: 'Ettore Di Giacinto',
    author_url: 'https://github.com/mudler',
    download_url: 'https://github.com/mudler/LocalAI/releases',
    source_url: 'https://github.com/mudler/LocalAI',
    documentation_url: 'https://localai.io',
    tags: 'openai api,self-hosted,inference,embeddings',
    featured: 0,
  },
  {
    name: 'SillyTavern',
    short_description: 'A locally installed interface for role-play and character chat with LLMs.',
    description:
      'Create characters and run interactive stories and role-play chats against local or hosted models, with group chats, world info and extensions.',
    category: 'entertainment',
    author: 'SillyTavern',
    author_url: 'https://github.com/SillyTavern',
    download_url: 'https://github.com/SillyTavern/SillyTavern/releases',
    source_url: 'https://github.com/SillyTavern/SillyTavern',
    documentation_url: 'https://docs.sillytavern.app',
    tags: 'role-play,characters,chat,stories',
    featured: 0,
  },
];

export const SEED_MARKER = 'catalog.seeded';

/**
 * Loads SEED_APPS once per database, into an empty catalog. The kv marker row is the claim:
 * of several instances starting together only the one whose insert lands seeds, and a catalog
 * whose examples were deleted is not refilled on the next start.
 */
export async function seedCatalog(apps: AppsRepo): Promise<number> {
  if (!(await apps.claimMarker(SEED_MARKER))) return 0;
  if ((await apps.count()) > 0) return 0;
  const now = Math.floor(Date.now() / 1000);
  // Spread the times so the default order (newest first) lists them in the order above.
  const rows = SEED_APPS.map((a, i) => ({
    ...a,
    version: '',
    thumbnail_url: '',
    status: AppStatus.published,
    created_time: now - i,
    updated_time: now - i,
    created_by: 0,
    updated_by: 0,
  }));
  await apps.insertRows(rows);
  return rows.length;
}
