# frozen_string_literal: true

require 'json'
require 'net/http'
require 'openssl'
require 'uri'

module PuppetX
  module Tuningbox
    # Error is a configuration or API problem the lookup must not hide.
    class Error < StandardError; end

    # Source is one Hiera data source read from the tuningbox ConfigDB API: the
    # effective document of a resource at a level path of an environment,
    #   GET {uri}/api/v1/config/environments/{env}/{level}/{value}/.../resources/{resource}/values?effective
    # Options (the hierarchy entry's `uri` arrives as options['uri'], Puppet
    # reserves that name inside `options`):
    #   environment   environment id (required)
    #   levels        ordered hash of hierarchy level name => value, least specific first
    #                 (optional: the server takes the node's from its placement)
    #   node          shorthand for a last level named `nodes`: the node's FQDN, id or UUID,
    #                 which the server resolves itself
    #   resource      data source name, may contain '/' (required)
    #   split         Fuel-style: read resource's dirname and return the hash under its
    #                 basename, so `override/node/%{facts.fqdn}` is key fqdn of override/node
    #   user, password  Basic auth credentials
    #   ssl_cert, ssl_key  client certificate and key (PEM) instead of a password, for a
    #                 server started with --client-ca: a Puppet server's or node's own
    #                 host certificate (e.g. /etc/puppetlabs/puppet/ssl/certs/<certname>.pem
    #                 and .../ssl/private_keys/<certname>.pem)
    #   ca_file       CA certificate(s) to trust for https
    #   open_timeout, read_timeout  seconds (defaults 5 and 10)
    class Source
      API_PREFIX = '/api/v1/config'
      NODE_LEVEL = 'nodes'
      MAX_CACHED_DOCUMENTS = 512

      @documents = {} # url => [etag, document], revalidated with If-None-Match
      @lock = Mutex.new

      class << self
        attr_reader :lock

        def cached_document(url)
          lock.synchronize { @documents[url] }
        end

        def store_document(url, etag, doc)
          lock.synchronize do
            @documents.delete(url)
            @documents.shift while @documents.size >= MAX_CACHED_DOCUMENTS
            @documents[url] = [etag, doc]
          end
        end
      end

      attr_reader :resource, :key

      def initialize(options)
        @base = parse_base(options['uri'])
        @environment = required_text(options, 'environment')
        @levels = parse_levels(options['levels'])
        @levels << [NODE_LEVEL, options['node'].to_s] if options.key?('node')
        @resource = required_text(options, 'resource')
        @key = nil
        split_resource if options['split']
        @user = options['user']&.to_s
        @password = options['password'].to_s
        @ca_file = options['ca_file']&.to_s
        @ssl_cert = options['ssl_cert']&.to_s
        @ssl_key = options['ssl_key']&.to_s
        raise Error, 'options ssl_cert and ssl_key go together' if @ssl_cert.nil? != @ssl_key.nil?
        raise Error, 'options ssl_cert and ssl_key need an https uri' if @ssl_cert && !@base.start_with?('https:')
        @open_timeout = seconds(options, 'open_timeout', 5)
        @read_timeout = seconds(options, 'read_timeout', 10)
      end

      # applicable? is false when an interpolated part came out empty (a fact
      # that is not set, no calling class): such a source holds no data, like a
      # YAML path whose file does not exist.
      def applicable?
        !@resource.empty? && (@key.nil? || !@key.empty?) && @levels.none? { |_, value| value.empty? }
      end

      # data returns the source's hash: the effective document, or the hash under
      # key when split; {} when the API answers 404.
      def data
        return {} unless applicable?

        doc = effective_document
        return doc if @key.nil?

        value = doc.fetch(@key, {})
        value = {} if value.nil?
        raise Error, "#{@resource}: the value of key '#{@key}' is a #{value.class}, not a hash" unless value.is_a?(Hash)

        value
      end

      # url is the effective-values URL of this source. The node goes as given:
      # the server maps an FQDN or UUID to the node, and fills in the levels
      # above it from the node's placement when they are not given.
      def url
        segments = ['environments', @environment]
        @levels.each { |name, value| segments << name << value }
        path = segments.map { |s| escape(s) }.join('/')
        resource = @resource.split('/').map { |s| escape(s) }.join('/')
        "#{@base}#{API_PREFIX}/#{path}/resources/#{resource}/values?effective"
      end

      private

      def effective_document
        target = url
        cached = self.class.cached_document(target)
        headers = cached ? { 'If-None-Match' => cached[0] } : {}
        response = get(target, headers)
        case response
        when Net::HTTPNotModified
          raise Error, "GET #{target}: 304 without a cached document" unless cached

          cached[1]
        when Net::HTTPOK
          doc = parse_object(response.body, target)
          self.class.store_document(target, response['ETag'], doc) if response['ETag']
          doc
        when Net::HTTPNotFound
          # A node the server does not know (or not in this environment) is a
          # configuration error, not an empty data source.
          raise Error, failure(target, response) if error_message(response).to_s.start_with?('node ')

          {}
        else
          raise Error, failure(target, response)
        end
      end

      def get(target, headers)
        uri = URI(target)
        request = Net::HTTP::Get.new(uri, { 'Accept' => 'application/json' }.merge(headers))
        request.basic_auth(@user, @password) if @user
        http = Net::HTTP.new(uri.host, uri.port)
        http.open_timeout = @open_timeout
        http.read_timeout = @read_timeout
        if uri.scheme == 'https'
          http.use_ssl = true
          http.verify_mode = OpenSSL::SSL::VERIFY_PEER
          http.ca_file = @ca_file if @ca_file
          if @ssl_cert
            http.cert = OpenSSL::X509::Certificate.new(File.read(@ssl_cert))
            http.key = OpenSSL::PKey.read(File.read(@ssl_key))
          end
        end
        http.start { |h| h.request(request) }
      rescue SystemCallError, IOError, Timeout::Error, OpenSSL::OpenSSLError, SocketError => e
        raise Error, "GET #{target}: #{e.class}: #{e.message}"
      end

      def parse_object(body, target)
        doc = JSON.parse(body, freeze: true)
        raise Error, "GET #{target}: answer is a #{doc.class}, not a JSON object" unless doc.is_a?(Hash)

        doc
      rescue JSON::ParserError => e
        raise Error, "GET #{target}: answer is not JSON: #{e.message}"
      end

      def error_message(response)
        JSON.parse(response.body).dig('error', 'message')
      rescue JSON::ParserError, TypeError, NoMethodError
        nil
      end

      def failure(target, response)
        message = error_message(response)
        hint = response.is_a?(Net::HTTPUnauthorized) ? ' (check the user and password options)' : ''
        "GET #{target}: HTTP #{response.code} #{message || response.message}#{hint}"
      end

      def split_resource
        dir, _, base = @resource.rpartition('/')
        raise Error, "resource '#{@resource}' has no '/' to split at" if dir.empty?

        @resource = dir
        @key = base
      end

      def parse_base(value)
        raise Error, "the hierarchy entry needs a uri (the tuningbox base URL, e.g. http://127.0.0.1:8080)" if value.to_s.empty?

        uri = URI(value.to_s)
        unless %w[http https].include?(uri.scheme) && uri.host && uri.query.nil?
          raise Error, "uri #{value} must be an http(s) base URL without a query"
        end

        value.to_s.chomp('/')
      rescue URI::InvalidURIError => e
        raise Error, "uri #{value}: #{e.message}"
      end

      def parse_levels(levels)
        return [] if levels.nil?
        raise Error, 'option levels must be a hash of level name => value, least specific first' unless levels.is_a?(Hash)

        levels.map { |name, value| [name.to_s, value.to_s] }
      end

      def required_text(options, name)
        value = options[name]
        raise Error, "option #{name} is required" if value.nil? || (name == 'environment' && value.to_s.empty?)

        value.to_s
      end

      def seconds(options, name, default)
        value = options.fetch(name, default)
        raise Error, "option #{name} must be a positive number of seconds" unless value.is_a?(Numeric) && value.positive?

        value
      end

      def escape(segment)
        segment.to_s.b.gsub(/[^A-Za-z0-9\-._~]/) { |c| format('%%%02X', c.ord) }
      end
    end
  end
end
