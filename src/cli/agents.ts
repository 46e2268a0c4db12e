// Every agent kind registers itself with the agent registry when its module loads; commands that
// resolve an agent spec import this one module so that `openai:`, `local:` and `tinker:` all work.
import '../agent/openai.js';
import '../backend/local/agent.js';
import '../backend/tinker/agent.js';
