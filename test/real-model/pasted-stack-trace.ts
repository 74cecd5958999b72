/**
 * A Java stack trace as users paste them: an exception from a Spring service, framework frames, two causes with
 * their own frames and "... N more" tails. Deterministic, and at least `minBytes` long (6 KB by default).
 */
export function buildPastedStackTrace(minBytes = 6 * 1024): string {
  const appFrames = [
    "com.acme.orders.service.OrderService.reserveStock(OrderService.java:214)",
    "com.acme.orders.service.OrderService.placeOrder(OrderService.java:131)",
    "com.acme.orders.api.OrderController.create(OrderController.java:58)",
  ];
  const frameworkFrames = [
    "java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)",
    "java.base/java.lang.reflect.Method.invoke(Method.java:580)",
    "org.springframework.web.method.support.InvocableHandlerMethod.doInvoke(InvocableHandlerMethod.java:255)",
    "org.springframework.web.method.support.InvocableHandlerMethod.invokeForRequest(InvocableHandlerMethod.java:188)",
    "org.springframework.web.servlet.mvc.method.annotation.ServletInvocableHandlerMethod.invokeAndHandle(ServletInvocableHandlerMethod.java:118)",
    "org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter.invokeHandlerMethod(RequestMappingHandlerAdapter.java:926)",
    "org.springframework.web.servlet.DispatcherServlet.doDispatch(DispatcherServlet.java:1089)",
    "org.springframework.web.servlet.FrameworkServlet.processRequest(FrameworkServlet.java:1014)",
    "jakarta.servlet.http.HttpServlet.service(HttpServlet.java:590)",
    "org.apache.catalina.core.ApplicationFilterChain.internalDoFilter(ApplicationFilterChain.java:205)",
    "org.springframework.web.filter.OncePerRequestFilter.doFilter(OncePerRequestFilter.java:116)",
    "org.apache.catalina.core.StandardWrapperValve.invoke(StandardWrapperValve.java:167)",
    "org.apache.coyote.http11.Http11Processor.service(Http11Processor.java:391)",
    "org.apache.tomcat.util.net.NioEndpoint$SocketProcessor.doRun(NioEndpoint.java:1736)",
    "java.base/java.lang.Thread.run(Thread.java:1583)",
  ];
  const dataFrames = [
    "org.hibernate.engine.jdbc.spi.SqlExceptionHelper.convert(SqlExceptionHelper.java:64)",
    "org.hibernate.engine.jdbc.internal.ResultSetReturnImpl.executeUpdate(ResultSetReturnImpl.java:194)",
    "org.hibernate.persister.entity.mutation.UpdateCoordinatorStandard.doStaticUpdate(UpdateCoordinatorStandard.java:781)",
    "org.hibernate.event.internal.DefaultFlushEventListener.onFlush(DefaultFlushEventListener.java:38)",
    "org.springframework.orm.jpa.JpaTransactionManager.doCommit(JpaTransactionManager.java:562)",
    "com.acme.orders.repository.StockRepository.decrement(StockRepository.java:77)",
  ];
  const driverFrames = [
    "org.postgresql.core.v3.QueryExecutorImpl.receiveErrorResponse(QueryExecutorImpl.java:2725)",
    "org.postgresql.core.v3.QueryExecutorImpl.processResults(QueryExecutorImpl.java:2412)",
    "org.postgresql.jdbc.PgStatement.executeInternal(PgStatement.java:517)",
    "com.zaxxer.hikari.pool.HikariProxyPreparedStatement.executeUpdate(HikariProxyPreparedStatement.java)",
  ];
  const at = (frames: readonly string[]) => frames.map((frame) => `\tat ${frame}`).join("\n");
  const sections: string[] = [
    "Why does my order endpoint fail? Here is the log:\n",
    "2024-05-14 09:21:07.412 ERROR 18231 --- [nio-8080-exec-7] o.a.c.c.C.[.[.[/].[dispatcherServlet] : " +
      "Servlet.service() for servlet [dispatcherServlet] threw exception",
    "org.springframework.dao.CannotAcquireLockException: could not execute statement " +
      "[ERROR: deadlock detected] [update stock set quantity=? where sku=?]; SQL [update stock set quantity=? where sku=?]",
    at([...appFrames, ...frameworkFrames]),
    "Caused by: org.hibernate.exception.LockAcquisitionException: could not execute statement [ERROR: deadlock detected]",
    at(dataFrames),
    `\t... ${frameworkFrames.length + 2} more`,
    "Caused by: org.postgresql.util.PSQLException: ERROR: deadlock detected\n" +
      "  Detail: Process 4121 waits for ShareLock on transaction 88123; blocked by process 4177.\n" +
      '  Hint: See server log for query details.\n  Where: while updating tuple (12,7) in relation "stock"',
    at(driverFrames),
    `\t... ${dataFrames.length + frameworkFrames.length} more`,
  ];
  let trace = sections.join("\n");
  // Retries log the same failure again, as real logs do, until the paste is as long as asked.
  for (let attempt = 2; Buffer.byteLength(trace) < minBytes; attempt++) {
    trace +=
      `\n2024-05-14 09:21:0${attempt}.9${attempt}1  WARN 18231 --- [nio-8080-exec-7] c.a.o.service.OrderService : ` +
      `retry ${attempt}/5 after CannotAcquireLockException\n${at(appFrames)}\n${at(dataFrames.slice(0, 3))}`;
  }
  return trace;
}
