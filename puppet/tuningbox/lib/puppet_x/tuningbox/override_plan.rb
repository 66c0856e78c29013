# frozen_string_literal: true

require 'json'
require 'net/http'
require 'openssl'
require 'set'
require 'uri'

module PuppetX
  module Tuningbox
    # OverridePlan applies Puppet resource overrides (spec 001) to the catalog
    # being compiled. The rules live in one place, tuningbox's
    #   POST {uri}/api/v1/config/overrides/apply
    # This side only knows the catalog: it sends the candidate resources (those
    # of the configured types) and every resource's relationship metaparameters
    # (for the cycle check), names the resource types that exist here (native
    # types and defined types on the modulepath), and carries out the answer:
    # the parameters of each updated resource, and each created one. Nothing in
    # the catalog changes until the whole answer is in and checked.
    class OverridePlan
      # Error is a problem that must fail the compile.
      class Error < StandardError; end

      APPLY_PATH = '/api/v1/config/overrides/apply'
      RELATIONSHIPS = %w[before notify require subscribe].freeze

      # defer arranges for the plan to be applied once every other resource is
      # in the catalog; a bad connection fails the compile right away.
      def self.defer(scope, configuration, options, connection)
        plan = new(scope, configuration, options, Connection.new(connection))
        scope.compiler.add_collection(Deferred.new(scope.compiler, plan))
      end

      def initialize(scope, configuration, options, connection)
        @scope = scope
        @configuration = configuration
        @options = options
        @connection = connection
        @types = configuration.keys.map { |t| t.to_s.downcase }.to_set
      end

      # apply asks tuningbox for the plan and carries it out.
      def apply
        resources = candidate_index
        answer = @connection.post(APPLY_PATH, request_body(resources.values))
        updates, creations = checked_plan(answer, resources)
        updates.each { |resource, params| params.each { |name, value| resource.set_parameter(name, value) } }
        creations.each { |type, title, params| create(type, title, params) }
        log(answer['report'])
      end

      private

      # candidate_index maps [type, title] to the compiler's resources the plan
      # can touch or whose relationships matter, classes and stages aside.
      def candidate_index
        @scope.compiler.resources.each_with_object({}) do |resource, index|
          next if resource.class? || resource.stage? || resource.type.to_s.casecmp?('node')

          index[[resource.type.to_s.downcase, resource.title.to_s]] = resource
        end
      end

      def request_body(resources)
        catalog = resources.filter_map do |resource|
          relationships = relationship_refs(resource)
          next unless @types.include?(resource.type.to_s.downcase) || !relationships.empty?

          { 'type' => resource.type.to_s, 'title' => resource.title.to_s, 'parameters' => relationships }
        end
        {
          'catalog' => catalog,
          'data' => { 'configuration' => plain(@configuration), 'configuration_options' => plain(@options) },
          'known_types' => @types.select { |t| resource_type(t) }.sort,
        }
      end

      # relationship_refs returns the resource's relationship metaparameters
      # as lists of references such as "Service[httpd]".
      def relationship_refs(resource)
        RELATIONSHIPS.each_with_object({}) do |name, out|
          value = resource[name]
          next if value.nil? || value == :undef

          # Not Array(value): a Puppet::Resource is Enumerable over its parameters.
          refs = (value.is_a?(Array) ? value.flatten : [value]).reject { |v| v.nil? || v == :undef }.map { |v| reference(v) }
          out[name] = refs unless refs.empty?
        end
      end

      def reference(value)
        case value
        when Puppet::Pops::Types::PResourceType
          "#{value.type_name}[#{value.title}]"
        else
          value.to_s
        end
      end

      # checked_plan turns the answer into the changes to make, and fails
      # before any change when one cannot be made.
      def checked_plan(answer, resources)
        report = answer['report']
        raise Error, "#{@connection.url(APPLY_PATH)}: the answer has no report" unless report.is_a?(Hash)

        planned = Array(answer['catalog']).to_h { |r| [[r['type'].to_s.downcase, r['title'].to_s], r['parameters'] || {}] }
        updates = Array(report['updated']).map do |entry|
          key = [entry['type'], entry['title']]
          resource = resources[key]
          raise Error, "#{ref(entry)}: the plan updates a resource that is not in the catalog" unless resource
          unless resource.builtin_type?
            raise Error, "#{ref(entry)} is an instance of the defined type #{resource.type}, already evaluated: " \
                         'override the resources it declares instead; nothing was applied'
          end

          [resource, planned_params(entry, planned)]
        end
        creations = Array(report['created']).map do |entry|
          raise Error, "#{ref(entry)}: unknown resource type #{entry['type']}; nothing was applied" unless resource_type(entry['type'])

          [entry['type'], entry['title'], planned_params(entry, planned)]
        end
        [updates, creations]
      end

      def planned_params(entry, planned)
        params = planned.fetch([entry['type'], entry['title']]) { raise Error, "#{ref(entry)}: missing from the planned catalog" }
        Array(entry['parameters']).to_h { |name| [name, params[name]] }
      end

      def create(type, title, params)
        evaluated = params.map do |name, value|
          Puppet::Parser::Resource::Param.new(name: name, value: value, source: @scope.source)
        end
        Puppet::Pops::Evaluator::Runtime3ResourceSupport.create_resources(
          nil, nil, @scope, false, false, type, [title], evaluated
        )
      end

      # resource_type finds a native type or a defined type on the modulepath.
      def resource_type(name)
        Puppet::Pops::Evaluator::Runtime3ResourceSupport.find_resource_type(@scope, name)
      rescue StandardError, LoadError
        nil
      end

      def log(report)
        counts = %w[updated created skipped].map { |k| "#{Array(report[k]).size} #{k}" }.join(', ')
        %w[updated created].each do |k|
          Array(report[k]).each { |e| Puppet.info("tuningbox::override_resources: #{k} #{ref(e)} (#{Array(e['parameters']).join(', ')})") }
        end
        Array(report['skipped']).each { |e| Puppet.info("tuningbox::override_resources: skipped #{ref(e)}: #{e['reason']}") }
        Puppet.notice("tuningbox::override_resources: #{counts}")
      end

      def ref(entry)
        type = entry['type'].to_s.split('::').map(&:capitalize).join('::')
        "#{type}[#{entry['title']}]"
      end

      # plain converts Puppet values in the data to JSON values.
      def plain(value)
        case value
        when Hash then value.to_h { |k, v| [k.to_s, plain(v)] }
        when Array then value.map { |v| plain(v) }
        when :undef then nil
        when String, Integer, Float, true, false, nil then value
        when Puppet::Pops::Types::PResourceType then reference(value)
        else value.to_s
        end
      end

      # Deferred is a compiler collection that waits until the compile's
      # generators have settled (no defined resource left to evaluate and no
      # resource added since its previous turn), then applies the plan once
      # and removes itself. Returning true keeps the compiler's generator loop
      # going, so resources the plan creates (defined types too) are evaluated.
      class Deferred
        def initialize(compiler, plan)
          @compiler = compiler
          @plan = plan
          @last_count = nil
        end

        def evaluate
          count = @compiler.resources.size
          pending = @compiler.resources.any? { |r| !r.evaluated? && !r.virtual? && !r.builtin_type? }
          settled = !pending && count == @last_count
          @last_count = count
          return true unless settled

          @compiler.delete_collection(self)
          @plan.apply
          true
        rescue Error => e
          raise Puppet::ParseError, "tuningbox::override_resources: #{e.message}"
        end

        # unresolved_resources is asked of every collection left at the end of a compile.
        def unresolved_resources
          nil
        end
      end

      # Connection posts JSON to tuningbox with the options the Hiera backend
      # takes: uri, user, password, ca_file, open_timeout, read_timeout.
      class Connection
        def initialize(options)
          options = options.transform_keys(&:to_s)
          base = options['uri'].to_s
          if base.empty?
            raise Error, 'connection: uri is required (the tuningbox base URL); set the Hiera key tuningbox::connection ' \
                         'or the connection parameter'
          end
          uri = URI(base)
          raise Error, "connection: uri #{base} must be an http(s) base URL" unless %w[http https].include?(uri.scheme) && uri.host

          @base = base.chomp('/')
          @user = options['user']&.to_s
          @password = options['password'].to_s
          @ca_file = options['ca_file']&.to_s
          @open_timeout = options.fetch('open_timeout', 5)
          @read_timeout = options.fetch('read_timeout', 30)
        rescue URI::InvalidURIError => e
          raise Error, "connection: uri #{base}: #{e.message}"
        end

        def url(path)
          "#{@base}#{path}"
        end

        # post returns the parsed JSON answer; anything but a 200 is an Error
        # carrying tuningbox's message, which names the resource at fault.
        def post(path, body)
          target = url(path)
          response = request(target, body)
          answer = begin
            JSON.parse(response.body.to_s)
          rescue JSON::ParserError
            nil
          end
          unless response.is_a?(Net::HTTPOK) && answer.is_a?(Hash)
            message = answer.is_a?(Hash) ? answer.dig('error', 'message') : nil
            raise Error, message || "POST #{target}: HTTP #{response.code} #{response.message}; nothing was applied"
          end
          answer
        end

        private

        def request(target, body)
          uri = URI(target)
          request = Net::HTTP::Post.new(uri, 'Accept' => 'application/json', 'Content-Type' => 'application/json')
          request.body = JSON.generate(body)
          request.basic_auth(@user, @password) if @user
          http = Net::HTTP.new(uri.host, uri.port)
          http.open_timeout = @open_timeout
          http.read_timeout = @read_timeout
          if uri.scheme == 'https'
            http.use_ssl = true
            http.verify_mode = OpenSSL::SSL::VERIFY_PEER
            http.ca_file = @ca_file if @ca_file
          end
          http.start { |h| h.request(request) }
        rescue SystemCallError, IOError, Timeout::Error, OpenSSL::SSL::SSLError, SocketError => e
          raise Error, "POST #{target}: #{e.class}: #{e.message}; tuningbox is unreachable and nothing was applied"
        end
      end
    end
  end
end
