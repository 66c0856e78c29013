# Runs one deployment through Astute's task-based deployment engine
# (fuel_deployment, and Astute::TaskDeployment that builds its cluster) with
# fake nodes, for shared/graphs' differential test of fault tolerance.
#
#   ruby run.rb --astute-lib DIR < scenario.json
#
# DIR holds fuel_deployment.rb and astute/task_deployment.rb (fuel-astute's
# lib/). The scenario on stdin:
#
#   {"tasks_graph": {"node": [{"id", "type", "fail_on_error", "requires": [{"name", "node_id"}]}]},
#    "fault_tolerance_groups": [{"name", "node_ids", "fault_tolerance"}],
#    "fail": ["task/node", ...], "noop_run": false}
#
# A node runs a task when Astute picks it and finishes it at its next poll,
# failed if the task is listed in fail (the simulator's rule); the task and
# node statuses then follow Astute::TaskNode (lib/astute/task_node.rb, not in
# the tree): a failed task with fail_on_error false is skipped, a failed task
# fails its node. Prints, as JSON, each task's status, the run's status as
# TaskDeployment reports it (ready or error), and the failed nodes and tasks.

require 'json'
require 'logger'
require 'optparse'
require 'ostruct'
require 'set'

astute_lib = nil
OptionParser.new do |opts|
  opts.on('--astute-lib DIR', "fuel-astute's lib directory") { |dir| astute_lib = dir }
end.parse!
abort 'run.rb: --astute-lib DIR is required' unless astute_lib

# The few ActiveSupport methods the engine calls (ActiveSupport is not on puppet-agent's Ruby).
class Object
  def blank?
    respond_to?(:empty?) ? !!empty? : !self
  end

  def present?
    !blank?
  end

  def in?(collection)
    collection.include?(self)
  end
end

class Hash
  def reverse_merge(other)
    other.merge(self)
  end
end

class Array
  def compact_blank
    reject(&:blank?)
  end
end

module Astute
  class DeploymentEngineError < StandardError; end

  def self.logger
    @logger ||= Logger.new($stderr, level: Logger::WARN)
  end

  def self.config
    @config ||= OpenStruct.new(max_nodes_per_call: 50, enable_graph_file: false)
  end
end

require File.join(astute_lib, 'fuel_deployment')
require File.join(astute_lib, 'astute', 'task_deployment')
Deployment::Log.logger = Astute.logger

module Driver
  class Cluster < Deployment::Cluster
    attr_accessor :noop_run, :debug_run, :node_statuses_transitions, :tasks_to_fail
  end

  # TaskNode's run and poll, with the simulator's task engine: a task
  # finishes at the node's next poll, failed when it is listed in tasks_to_fail.
  class Node < Deployment::Node
    attr_accessor :context

    def run(task)
      self.task = task
      task.set_status_running
      set_status_busy
    end

    def poll
      return unless busy?
      failed = cluster.tasks_to_fail.include?("#{task.name}/#{name}")
      task.status = if failed && !task.data.fetch('fail_on_error', true)
                      :skipped # TaskNode#setup_task_status
                    else
                      failed ? :failed : :successful
                    end
      # TaskNode#setup_node_status
      if task.failed?
        set_status_failed
      elsif task.dep_failed?
        set_status_skipped
      else
        set_status_online
      end
    end
  end

  # Collects TaskDeployment's reports; the last one with a status is the run's.
  class Context
    attr_reader :status, :error

    def task_id
      'differential'
    end

    def report(msg)
      return unless msg.key?('status')
      @status = msg['status']
      @error = msg['error']
    end

    def report_and_update_status(msg)
      report(msg)
    end
  end

  class TaskDeployment < Astute::TaskDeployment
    attr_reader :cluster

    def create_cluster(options = {})
      @cluster = super
      @cluster.tasks_to_fail = options.fetch(:tasks_to_fail)
      @cluster
    end

    private

    # No mcollective: every node answers.
    def detect_offline_nodes(_uids)
      []
    end
  end
end

scenario = JSON.parse($stdin.read)
graph = scenario.fetch('tasks_graph')
graph['null'] ||= [] # Astute's sync node, which TaskDeployment expects
ctx = Driver::Context.new
deployment = Driver::TaskDeployment.new(ctx, Driver::Cluster, Driver::Node)
deployment.deploy(
  tasks_graph: graph,
  tasks_metadata: { 'fault_tolerance_groups' => scenario.fetch('fault_tolerance_groups', []) },
  noop_run: scenario.fetch('noop_run', false),
  tasks_to_fail: scenario.fetch('fail', [])
)
cluster = deployment.cluster
tasks = Hash.new { |h, k| h[k] = {} }
cluster.each_task { |task| tasks[task.node.name][task.name] = task.status.to_s }
tasks.delete('virtual_sync_node')
puts JSON.generate(
  'status' => ctx.status,
  'error' => ctx.error,
  'tasks' => tasks,
  'failed_nodes' => cluster.failed_nodes.map(&:name).sort,
  'skipped_nodes' => cluster.skipped_nodes.map(&:name).reject { |n| n == 'virtual_sync_node' }.sort,
  'failed_tasks' => cluster.failed_tasks.map { |t| "#{t.name}/#{t.node.name}" }.sort
)
