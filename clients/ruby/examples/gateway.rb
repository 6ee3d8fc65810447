# Append messages, remember a fact, build the next turn's context, recall, and get a
# compiled context for a task (seed 002's RetrieveContext), through the gateway's gRPC API with the generated client (Debian's ruby-grpc).
# Each step prints one JSON line.
#
#   AGENTMEMORY_GATEWAY=localhost:50051 AGENTMEMORY_API_KEY=$(cat data/demo-api-key) \
#     ruby -I clients/ruby/lib clients/ruby/examples/gateway.rb
require 'json'
require 'google/protobuf/well_known_types'
require 'agentmemory/gateway/v1/gateway_service_services_pb'
require 'agentmemory/gateway/v1/retrieval_service_services_pb'

V1 = Agentmemory::Gateway::V1
Common = Agentmemory::Common::V1

address = ENV.fetch('AGENTMEMORY_GATEWAY', 'localhost:50051')
gateway = V1::GatewayService::Stub.new(address, :this_channel_is_insecure)
retrieval = V1::RetrievalService::Stub.new(address, :this_channel_is_insecure)
auth = { metadata: { 'authorization' => "Bearer #{ENV.fetch('AGENTMEMORY_API_KEY')}" } }
thread_id = ENV.fetch('THREAD_ID', 'example-thread')

def print_step(step, value)
  puts JSON.generate({ step: step }.merge(value))
end

def arguments(hash)
  Google::Protobuf::Struct.from_hash(hash)
end

caller = V1::Caller.new(agent_id: ENV.fetch('AGENT_ID', 'example-agent'),
                        user_id: ENV.fetch('USER_ID', 'ana'), surface: :SURFACE_AGENT)
# The memory tools answer only if Memory is bound to this agent: an agent setting an admin
# key changes (MemoryLibraryService.UpdateAgentSettings; see the README).

appended = gateway.append_messages(V1::AppendMessagesRequest.new(
  caller: caller, thread_id: thread_id, messages: [
    Common::Message.new(id: 'm1', role: :ROLE_USER, content: 'Hi, I am Ana and I live in Lisbon.'),
    Common::Message.new(id: 'm2', role: :ROLE_ASSISTANT, content: 'Nice to meet you, Ana.')
  ]), **auth)
print_step('append', offsets: appended.offsets.to_a)

stored = gateway.call_tool(V1::CallToolRequest.new(
  caller: caller, thread_id: thread_id, tool_name: 'memory_store',
  arguments: arguments('key' => 'home_city', 'content' => 'The user lives in Lisbon.',
                       'category' => 'user_profile', 'importance' => 0.9)), **auth)
print_step('store', isError: stored.is_error, result: stored.result.to_h)

context = gateway.build_context(V1::BuildContextRequest.new(caller: caller, thread_id: thread_id),
                                **auth)
print_step('context',
           messages: context.messages.map { |m| { role: m.role.to_s, content: m.content } },
           tools: context.tools.map(&:name))

recalled = gateway.call_tool(V1::CallToolRequest.new(
  caller: caller, thread_id: thread_id, tool_name: 'memory_recall',
  arguments: arguments('query' => 'Where does the user live?')), **auth)
print_step('recall', isError: recalled.is_error,
                     contents: recalled.result.to_h['entries'].map { |e| e['content'] })

compiled = retrieval.retrieve_context(V1::RetrieveContextRequest.new(
  caller: caller, run_id: ENV.fetch('RUN_ID', 'example-run'),
  semantic_query: 'Where does the user live?', token_budget: 1000), **auth)
print_step('retrieve', receiptId: compiled.receipt_id, rendered: compiled.rendered)
